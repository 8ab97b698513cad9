// A tenant's settlement configuration (spec: Settlement configuration; docs/rails.md#settlement-configuration): which
// rails it funds with and where the money goes on each, assembled from the registered rails' fields. Here: the
// route's contract, the rules across rails (`rails` itself, endpoint URLs), each rail's own rules run through its
// definition, and the answer. Storage in db/settlement-config-repository.ts (per rail, secrets sealed), routes in
// surfaces/gateway/routes/settlement-config.ts. Each of the spec's five 400 cases has its own code.
import type { Environment } from '../credentials/api-key.ts';
import { settlementConfigContracts, type SettlementConfigAnswer, type SettlementConfigBody } from '../contracts/settlement-config.ts';
import { errorCatalogue, type ErrorCode } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { RailConfigurationField, SettlementConfigFault } from './definition.ts';
import { registeredRails } from './index.ts';
import { flagSetting, settingsOf, textSetting } from './settings.ts';
import type { RailName, RailSecrets, RailSettings, RailSettingValue, SettlementConfig } from './types.ts';

/** What a PUT sets, checked and normalized: storage adds the secrets' state and the time of the write. */
export type SettlementConfigInput = Pick<SettlementConfig, 'rails' | 'settings'>;

/** One configuration field and the rail that declares it. */
export interface RailField {
  readonly rail: RailName;
  readonly field: RailConfigurationField;
}

/** Every registered rail's configuration fields, in registry order, then each rail's declared order. */
export function railFields(): RailField[] {
  return registeredRails().flatMap((rail) => rail.fields.map((field) => ({ rail: rail.name, field })));
}

/** The body and answer schemas of the routes, for the rails registered now (the route is built once, with the app). */
export function settlementConfigSchemas() {
  return settlementConfigContracts(railFields().map(({ field }) => field), registeredRails().map((rail) => rail.name));
}

function invalid(fault: SettlementConfigFault): never {
  throw new ServiceError(fault.code, { details: { field: fault.field }, ...(fault.message ? { message: fault.message } : {}) });
}

/** Empty or blank text means "not set". */
function optionalText(value: unknown): string | null {
  return typeof value !== 'string' || value.trim() === '' ? null : value;
}

function validateRails(rails: readonly string[]): RailName[] {
  const code = 'settlement_config.invalid_rail_combination';
  const names = registeredRails().map((rail) => rail.name);
  if (rails.length === 0) invalid({ code, field: 'rails', message: `rails must name at least one rail (${names.join(', ')}).` });
  const seen = new Set<string>();
  for (const rail of rails) {
    if (!names.includes(rail)) {
      invalid({ code, field: 'rails', message: `rails may only contain ${names.join(' and ')}; ${JSON.stringify(rail)} is not a rail.` });
    }
    if (seen.has(rail)) invalid({ code, field: 'rails', message: `rails names ${rail} twice.` });
    seen.add(rail);
  }
  return [...rails];
}

/** The position of a code in the catalogue, which lists the settlement configuration's codes in the spec's order. */
const catalogueOrder = new Map(Object.keys(errorCatalogue).map((code, index) => [code, index]));
const orderOf = (code: ErrorCode) => catalogueOrder.get(code) ?? Number.MAX_SAFE_INTEGER;

/**
 * Checks a configuration body for the tenant's environment and returns it normalized: every registered rail's
 * values, absent or blank text null, flags false, endpoints without a trailing slash. Throws ServiceError 400: the
 * rails first (`invalid_rail_combination`), then the first fault of any rail in the catalogue's order of codes (the
 * spec's order), rails in registry order within one code.
 */
export function validateSettlementConfig(body: SettlementConfigBody, environment: Environment): SettlementConfigInput {
  const rails = validateRails(body.rails);
  const settings: Record<RailName, RailSettings> = {};
  const faults: SettlementConfigFault[] = [];
  for (const rail of registeredRails()) {
    const values: Record<string, RailSettingValue> = {};
    for (const field of rail.fields) {
      if (field.kind === 'secret') continue;
      if (field.kind === 'flag') values[field.name] = body[field.name] === true;
      else if (field.kind === 'endpoint') values[field.name] = railEndpointUrl(body[field.name], field.name, faults);
      else values[field.name] = optionalText(body[field.name]);
    }
    settings[rail.name] = values;
    faults.push(...(rail.checkSettings?.(values, { environment, listed: rails.includes(rail.name) }) ?? []));
  }
  const first = faults.reduce<SettlementConfigFault | undefined>((earliest, fault) => (earliest && orderOf(earliest.code) <= orderOf(fault.code) ? earliest : fault), undefined);
  if (first) invalid(first);
  return { rails, settings };
}

/** A secret a PUT replaces (a string) or clears (null); a secret the body leaves out is kept, and has none. */
export interface SecretChange {
  readonly rail: RailName;
  readonly field: string;
  readonly value: string | null;
}

/** What the body asks of each secret: omitted keeps, null or blank clears, a string replaces. */
export function secretChangesOf(body: SettlementConfigBody): SecretChange[] {
  return railFields()
    .filter(({ field }) => field.kind === 'secret' && body[field.name] !== undefined)
    .map(({ rail, field }) => ({ rail, field: field.name, value: optionalText(body[field.name]) }));
}

/** Each rail's secrets once `changes` are applied over the stored ones (opened): what a live PUT's dry call uses. */
export function secretsAfter(stored: Readonly<Record<RailName, RailSecrets>>, changes: readonly SecretChange[]): Record<RailName, RailSecrets> {
  const secrets: Record<RailName, Record<string, string | null>> = {};
  for (const { rail, field } of railFields().filter(({ field }) => field.kind === 'secret')) {
    const change = changes.find((candidate) => candidate.rail === rail && candidate.field === field.name);
    (secrets[rail] ??= {})[field.name] = change ? change.value : stored[rail]?.[field.name] ?? null;
  }
  return secrets;
}

/** The answer of both routes: the frame, each registered rail's public values and endpoint, and `<secret>_set`. */
export function presentSettlementConfig(environment: Environment, config: SettlementConfig): SettlementConfigAnswer {
  const answer: SettlementConfigAnswer = { object: 'settlement_config', environment, rails: [...config.rails], updated_at: config.updated_at ?? null };
  for (const { rail, field } of railFields()) {
    const settings = settingsOf(config, rail);
    if (field.kind === 'secret') answer[`${field.name}_set`] = config.secretsSet.includes(field.name);
    else answer[field.name] = field.kind === 'flag' ? flagSetting(settings, field.name) : textSetting(settings, field.name);
  }
  return answer;
}

/** Hosts an `http:` endpoint may name: only this machine, where nothing crosses a network in the clear. */
const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A rail endpoint: an absolute https URL without credentials, query or fragment (http only to a loopback host);
 * kept without a trailing slash. A faulty one adds its fault and reads as not set. */
function railEndpointUrl(value: unknown, field: string, faults: SettlementConfigFault[]): string | null {
  const text = optionalText(value);
  if (text === null) return null;
  const fault = (message: string) => {
    faults.push({ code: 'settlement_config.rail_endpoint_invalid', field, message });
    return null;
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fault(`${field} is not an absolute URL.`);
  }
  const loopback = loopbackHosts.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) return fault(`${field} must be https (http only to a loopback host).`);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    return fault(`${field} may not carry credentials, a query or a fragment; put secrets in their own fields.`);
  }
  return url.toString().replace(/\/+$/, '');
}
