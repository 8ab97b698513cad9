// The registry of funding rails (docs/rails.md "Adding a rail"): one line per rail, each rail's one declaration
// (./definition.ts) in its own folder, and the look-ups every consumer iterates instead of naming a rail. The fund
// route asks railAdapterFor for the adapter of an intent's rail in the tenant's environment: sandbox tenants get the
// rail's simulator; live tenants get nothing faked: the rail's live adapter, reaching the facilitator or processor the
// tenant configured, or 422 `funding.rail_not_configured`.
import { ServiceError } from '../errors/service-error.ts';
import { builtInRails, type BuiltInRail } from './built-in.ts';
import type { RailDefinition } from './definition.ts';
import { settingsOf, textSetting, flagSetting } from './settings.ts';
import type { FundingContext, LiveRailAdapter, LiveRailOptions, RailAdapter, RailName, RailOperation, RailSecrets, SettlementConfig } from './types.ts';

export type {
  ClaimedAttempt,
  CredentialOutcome,
  FundingContext,
  InstructionKind,
  InstructionOutcome,
  IssuedChallenge,
  LiveRailAdapter,
  LiveRailOptions,
  PaymentProblem,
  PresentedCredential,
  ProbeResult,
  RailAdapter,
  RailInstructionRequest,
  RailName,
  RailOperation,
  RailRuntime,
  RailSecrets,
  RailSettings,
  RailSettingValue,
  SettlementConfig,
} from './types.ts';
export type { RailConfigurationField, RailCredentialHeader, RailDefinition, RailHeader, SettlementConfigFault } from './definition.ts';
export { RailOutcomeUnknownError, RailUnavailableError } from './types.ts';
export { paymentProblem, paymentProblemTypeBase, type PaymentProblemCode } from './wire.ts';

/** Registered rails by name, in registration order; aliases to the name they mean. */
const rails = new Map<RailName, RailDefinition>();
const aliases = new Map<string, RailName>();

/** A rail name as an intent's `settlement_rail` may carry it (src/contracts/intents.ts SettlementRailId). */
const railNamePattern = /^[a-z0-9_]{1,64}$/;
/** Members of the settlement configuration's answer that are not a rail's field. */
const reservedFieldNames = new Set(['rails', 'object', 'environment', 'updated_at']);

/**
 * Adds a rail to the registry and returns what removes it again. The built-in rails are registered when this module
 * loads; a test registers a rail of its own before it builds the app (the fund route's header schema, the settlement
 * configuration's contract, MCP and log redaction read the registry when the app is built; funding reads it on every
 * request). A definition that clashes with a registered rail or breaks the declaration's rules is a programmer error.
 */
export function registerRail(definition: RailDefinition): () => void {
  assertDefinition(definition);
  rails.set(definition.name, definition);
  for (const alias of definition.aliases) aliases.set(alias, definition.name);
  return () => {
    if (rails.get(definition.name) !== definition) return;
    rails.delete(definition.name);
    for (const alias of definition.aliases) aliases.delete(alias);
  };
}

function assertDefinition(definition: RailDefinition): void {
  const fail = (reason: string): never => {
    throw new Error(`rail ${JSON.stringify(definition.name)}: ${reason}`);
  };
  for (const name of [definition.name, ...definition.aliases]) {
    if (!railNamePattern.test(name)) fail(`${JSON.stringify(name)} is not a rail name (${railNamePattern})`);
    if (rails.has(name) || aliases.has(name)) fail(`${name} already names a registered rail`);
  }
  if (definition.currencies.some((currency) => !/^[a-z]{3}$/.test(currency))) fail('currencies are lowercase ISO 4217 codes');
  // Node gives a route the request's header names in lowercase: a credential header is read by that name.
  if (definition.credentialHeaders.some(({ name }) => name !== name.toLowerCase())) fail('credential header names are lowercase');
  if (!definition.operations.sandbox.includes('charge')) fail('every rail charges in sandbox (its simulator funds sandbox intents)');
  const instructed = definition.operations.live.filter((operation) => operation !== 'charge');
  if (instructed.length > 0 && !definition.liveAdapter) fail(`it declares ${instructed.join(', ')} in live but has no live adapter`);
  for (const field of definition.fields) {
    if (field.kind === 'text' && field.lengthMax === undefined) fail(`the text field ${field.name} declares no lengthMax`);
  }
  const others = [...rails.values()];
  const takenFields = new Set([...reservedFieldNames, ...others.flatMap(configurationMemberNames)]);
  for (const name of configurationMemberNames(definition)) if (takenFields.has(name)) fail(`the configuration field ${name} is taken`);
  const takenHeaders = new Set(others.flatMap((rail) => rail.credentialHeaders.map((header) => header.name)));
  const takenArguments = new Set(others.flatMap((rail) => rail.credentialHeaders.map((header) => header.toolArgument)));
  for (const header of definition.credentialHeaders) {
    if (takenHeaders.has(header.name)) fail(`the credential header ${header.name} is another rail's`);
    if (takenArguments.has(header.toolArgument)) fail(`the MCP argument ${header.toolArgument} is another rail's`);
  }
}

/** The names a rail's fields take on the wire: each field, and `<secret>_set` for each secret. */
function configurationMemberNames(definition: RailDefinition): string[] {
  return definition.fields.flatMap((field) => (field.kind === 'secret' ? [field.name, `${field.name}_set`] : [field.name]));
}

/** The declaration in a built-in rail's folder, held to the wire facts its line names: a client answers to the names the
 * server runs. A folder that breaks the convention is a programmer error, raised when the registry loads. */
async function declarationOf({ folder, wire }: BuiltInRail): Promise<RailDefinition> {
  const { railDefinition } = (await import(`./${folder}/index.ts`)) as { railDefinition?: RailDefinition };
  if (!railDefinition) throw new Error(`src/rails/${folder}/index.ts exports no railDefinition`);
  const names = [railDefinition.name, ...railDefinition.aliases];
  if (names.join() !== wire.rails.join()) {
    throw new Error(`rail ${railDefinition.name}: its wire names ${wire.rails.join(', ')}, its declaration ${names.join(', ')}`);
  }
  return railDefinition;
}

// Loaded in parallel, registered in the order of the lines.
for (const definition of await Promise.all(builtInRails.map(declarationOf))) registerRail(definition);

/** Every registered rail, in registration order. */
export function registeredRails(): readonly RailDefinition[] {
  return [...rails.values()];
}

/** The rail of a rail name (ours or an alias), or undefined when we do not run it. */
export function railOf(rail: string): RailDefinition | undefined {
  return rails.get(rail) ?? rails.get(aliases.get(rail) ?? '');
}

/** Our rail name for a rail name (ours or an alias), or undefined when we do not run it. */
export function resolveRailName(rail: string): RailName | undefined {
  return railOf(rail)?.name;
}

/** Whether `rail` carries out `operation` in `environment` (RailDefinition.operations). */
export function railCarriesOut(rail: string, environment: 'sandbox' | 'live', operation: RailOperation): boolean {
  return railOf(rail)?.operations[environment].includes(operation) ?? false;
}

/** What log lines must never show of any rail (pino redaction paths, handed to the logger where the server builds
 * it): every credential header, every secret field, and what a rail adds. */
export function railRedactedPaths(): string[] {
  return registeredRails().flatMap((rail) => [
    ...rail.credentialHeaders.map((header) => `req.headers[${JSON.stringify(header.name)}]`),
    ...rail.fields.filter((field) => field.kind === 'secret').map((field) => `*.${field.name}`),
    ...(rail.redactedFields ?? []).map((field) => `*.${field}`),
  ]);
}

/** What live funding on `rail` needs configured and the configuration lacks: `rails` when it does not list the rail,
 * each field the rail requires in live, and, once there is a configuration, the rail's endpoint. */
function missingLiveConfiguration(rail: RailDefinition, config: SettlementConfig | undefined): string[] {
  const settings = settingsOf(config, rail.name);
  const isSet = (field: RailDefinition['fields'][number]) =>
    field.kind === 'flag' ? flagSetting(settings, field.name) : textSetting(settings, field.name) !== null;
  return [
    ...(config?.rails.includes(rail.name) ? [] : ['rails']),
    ...rail.fields.filter((field) => field.requiredInLive && !isSet(field)).map((field) => field.name),
    ...(config ? rail.fields.filter((field) => field.kind === 'endpoint' && !isSet(field)).map((field) => field.name) : []),
  ];
}

/** The live adapter of `rail` for a configuration (the probe of a PUT, the sweeper), or undefined when this
 * deployment has none for the rail. */
export async function liveAdapterFor(rail: RailName, options: LiveRailOptions): Promise<LiveRailAdapter | undefined> {
  return railOf(rail)?.liveAdapter?.(options);
}

/** What railAdapterFor needs beyond the funding context in live: the tenant's secrets, opened, by rail, and the call
 * deadline. */
export interface LiveAccess {
  readonly secrets: Readonly<Record<RailName, RailSecrets>>;
  readonly callTimeoutMs: number;
}

/**
 * The adapter for an intent's rail in a tenant's environment. Rejects with ServiceError 422:
 * - `funding.rail_unsupported` for a rail name we do not run (e.g. the client's `stripe_connect`);
 * - `funding.currency_not_allowed` when the rail cannot carry the currency;
 * - `funding.rail_not_configured` when a sandbox tenant's configuration leaves the rail out of `rails`, and in
 *   live without the rail's configuration (its endpoint included) or when this deployment has no live adapter
 *   for the rail (nothing is faked in live).
 */
export async function railAdapterFor(
  rail: string,
  context: Pick<FundingContext, 'environment' | 'config' | 'currency'>,
  live?: LiveAccess,
): Promise<RailAdapter> {
  const definition = railOf(rail);
  if (!definition) {
    const names = registeredRails().map((registered) => registered.name);
    throw new ServiceError('funding.rail_unsupported', {
      message: `This service does not run the settlement rail ${JSON.stringify(rail)}; use ${names.join(' or ')}.`,
      details: { settlement_rail: rail, supported_rails: [...names, ...aliases.keys()] },
    });
  }
  const { name, currencies } = definition;
  if (!currencies.includes(context.currency)) {
    throw new ServiceError('funding.currency_not_allowed', {
      message: `The ${name} rail carries ${currencies.join(', ')} only, not ${JSON.stringify(context.currency)}.`,
      details: { settlement_rail: rail, currency: context.currency, allowed_currencies: currencies },
    });
  }
  if (context.environment === 'live') return liveAdapterOf(definition, rail, context.config, live);
  if (context.config && !context.config.rails.includes(name)) {
    throw new ServiceError('funding.rail_not_configured', {
      message: `The settlement configuration of this tenant does not enable ${name}; add it to rails.`,
      details: { settlement_rail: rail, missing_fields: ['rails'] },
    });
  }
  return definition.sandboxAdapter(rail);
}

async function liveAdapterOf(definition: RailDefinition, rail: string, config: SettlementConfig | undefined, live: LiveAccess | undefined): Promise<RailAdapter> {
  const { name } = definition;
  const missing = missingLiveConfiguration(definition, config);
  if (missing.length > 0) {
    throw new ServiceError('funding.rail_not_configured', {
      message: `Live funding on ${name} needs the settlement configuration (PUT /v1/admin/settlement/config): ${missing.join(', ')}.`,
      details: { settlement_rail: rail, missing_fields: missing },
    });
  }
  const adapter = live && config
    ? await definition.liveAdapter?.({ settlementRail: rail, settings: settingsOf(config, name), secrets: live.secrets[name] ?? {}, callTimeoutMs: live.callTimeoutMs })
    : undefined;
  if (adapter) return adapter;
  throw new ServiceError('funding.rail_not_configured', {
    message: `Live funding on ${name} needs a ${definition.counterpart} connection, and this deployment has none for it.`,
    details: { settlement_rail: rail, missing_fields: definition.fields.filter((field) => field.kind === 'endpoint').map((field) => field.name) },
  });
}
