// The six managed policy templates of the spec: each turns tenant parameters (defaults as
// docs/predicates.md#managed-templates lists them) into a predicate_dsl document that is then validated like any other,
// plus a one-sentence human summary.
import { predicateKeyLengthMax, predicatePathSegmentsMax, templateStringParameterLengthMax } from '../limits.ts';
import type { Clause, EvidencePath, PredicateDocument } from './ast.ts';
import { compilePredicate, type CompiledPredicate } from './compile.ts';
import { PredicateError, type PredicateErrorDetails } from './errors.ts';
import { deepFreeze, humanPath, isJsonObject } from './json-value.ts';

// Defined in src/limits.ts with every other limit; re-exported here, where it is used.
export { templateStringParameterLengthMax } from '../limits.ts';

export type TemplateParameterType = 'string[]' | 'string' | 'integer';
export type TemplateParameterValue = EvidencePath | string | number;
export type TemplateParameters = Readonly<Record<string, TemplateParameterValue>>;

export interface TemplateParameter {
  readonly name: string;
  readonly type: TemplateParameterType;
  readonly defaultValue: TemplateParameterValue;
  /** Inclusive bounds of an integer parameter. */
  readonly minimum?: number;
  readonly maximum?: number;
  /** The values a string parameter may take, when it names a choice. */
  readonly values?: readonly string[];
  /** Left out of the materialized parameters when not given (its default applies all the same): a parameter added
   * after versions were drafted, so that a version drafted without it keeps the parameters, and the content digest,
   * it always had. */
  readonly optional?: boolean;
}

export interface ManagedTemplate {
  readonly templateId: string;
  /** What the template is for (the spec's "Use" column). */
  readonly use: string;
  readonly parameters: readonly TemplateParameter[];
  /** Builds the root clause from complete parameters (defaults already applied). */
  readonly buildRoot: (parameters: TemplateParameters) => Clause;
  readonly summarize: (parameters: TemplateParameters) => string;
}

export interface MaterializedTemplate {
  readonly templateId: string;
  /** The parameters as given, with every omitted one set to its default. */
  readonly parameters: TemplateParameters;
  /** The wire's `materialized_dsl`. */
  readonly predicate: PredicateDocument;
  /** The wire's `human_summary`. */
  readonly humanSummary: string;
  readonly compiled: CompiledPredicate;
}

/** How a passing rule settles: the whole amount, or (`metered`, completion_budget_v1) the cost the payee signed. */
export const releaseModes = ['full', 'metered'] as const;
export type ReleaseMode = (typeof releaseModes)[number];

const path = (parameters: TemplateParameters, name: string): EvidencePath => parameters[name] as EvidencePath;
const where = (parameters: TemplateParameters, name: string): string => humanPath(path(parameters, name));
const literal = (parameters: TemplateParameters, name: string): string => JSON.stringify(parameters[name]);
const schemaField = (field: string): Clause => ({ op: 'schema_field', field });

// Deep-frozen: the defaults are handed out by templateCatalog(), and no caller may change them for the next one.
export const managedTemplates: readonly ManagedTemplate[] = deepFreeze([
  {
    templateId: 'true_v1',
    use: 'Smoke test / externally governed release',
    parameters: [],
    buildRoot: () => ({ op: 'true' }),
    summarize: () => 'Always releases, whatever the evidence.',
  },
  {
    templateId: 'completion_v1',
    use: 'Single completion-style field',
    parameters: [
      { name: 'status_path', type: 'string[]', defaultValue: ['status'] },
      { name: 'expected_status', type: 'string', defaultValue: 'completed' },
    ],
    buildRoot: (p) => ({ op: 'completion', path: path(p, 'status_path'), value: p['expected_status'] as string }),
    summarize: (p) => `Releases when evidence ${where(p, 'status_path')} equals ${literal(p, 'expected_status')}.`,
  },
  {
    templateId: 'completion_budget_v1',
    use: 'Completion and cost within budget',
    parameters: [
      { name: 'status_path', type: 'string[]', defaultValue: ['status'] },
      { name: 'expected_status', type: 'string', defaultValue: 'completed' },
      { name: 'cost_path', type: 'string[]', defaultValue: ['cost_cents'] },
      // docs/engine.md#the-split-rule: `metered` releases the cost at cost_path and refunds the rest.
      { name: 'release_mode', type: 'string', defaultValue: 'full', values: releaseModes, optional: true },
    ],
    buildRoot: (p) => ({
      op: 'and',
      clauses: [
        { op: 'completion', path: path(p, 'status_path'), value: p['expected_status'] as string },
        { op: 'budget_cap', path: path(p, 'cost_path') },
      ],
    }),
    summarize: (p) =>
      `Releases when evidence ${where(p, 'status_path')} equals ${literal(p, 'expected_status')} and evidence ` +
      `${where(p, 'cost_path')} is an integer no greater than the intent amount_cents` +
      (p['release_mode'] === 'metered' ? `; releases that cost to the payee and refunds the rest.` : '.'),
  },
  {
    templateId: 'api_response_v1',
    use: 'Paid API returned success',
    parameters: [
      { name: 'http_status_path', type: 'string[]', defaultValue: ['http_status'] },
      { name: 'expected_http_status', type: 'integer', defaultValue: 200, minimum: 100, maximum: 599 },
    ],
    buildRoot: (p) => ({
      op: 'and',
      clauses: [
        { op: 'eq', path: path(p, 'http_status_path'), value: p['expected_http_status'] as number },
        schemaField('vendor_ref_id'),
        schemaField('response_digest'),
      ],
    }),
    summarize: (p) =>
      `Releases when evidence ${where(p, 'http_status_path')} equals ${literal(p, 'expected_http_status')} and ` +
      'fields vendor_ref_id and response_digest have the types evidence_schema declares.',
  },
  {
    templateId: 'webhook_confirmation_v1',
    use: 'Async webhook confirmation in evidence',
    parameters: [
      { name: 'event_type_path', type: 'string[]', defaultValue: ['event_type'] },
      { name: 'expected_event_type', type: 'string', defaultValue: 'payment.succeeded' },
    ],
    buildRoot: (p) => ({
      op: 'and',
      clauses: [
        { op: 'completion', path: path(p, 'event_type_path'), value: p['expected_event_type'] as string },
        schemaField('webhook_event_id'),
        schemaField('payload_digest'),
      ],
    }),
    summarize: (p) =>
      `Releases when evidence ${where(p, 'event_type_path')} equals ${literal(p, 'expected_event_type')} and ` +
      'fields webhook_event_id and payload_digest have the types evidence_schema declares.',
  },
  {
    templateId: 'artifact_hash_v1',
    use: 'Out-of-band artifact attestation',
    parameters: [
      { name: 'operation_path', type: 'string[]', defaultValue: ['operation'] },
      { name: 'expected_operation', type: 'string', defaultValue: 'attested' },
    ],
    buildRoot: (p) => ({
      op: 'and',
      clauses: [
        schemaField('artifact_blake3_hex'),
        { op: 'array_nonempty', field: 'artifact_blake3_hex' },
        { op: 'completion', path: path(p, 'operation_path'), value: p['expected_operation'] as string },
        schemaField('vendor_ref_id'),
      ],
    }),
    summarize: (p) =>
      'Releases when field artifact_blake3_hex has the type evidence_schema declares and is a non-empty array, ' +
      `evidence ${where(p, 'operation_path')} equals ${literal(p, 'expected_operation')}, and field vendor_ref_id ` +
      'has the type evidence_schema declares.',
  },
]);

const templatesById = new Map(managedTemplates.map((template) => [template.templateId, template]));
const templateIds = Object.freeze(managedTemplates.map((template) => template.templateId));

/** The template list as `GET /harbor/policy/v1/templates` shows it. */
export function templateCatalog(): { template_id: string; use: string; parameters: { name: string; type: TemplateParameterType; default: TemplateParameterValue }[] }[] {
  return managedTemplates.map((template) => ({
    template_id: template.templateId,
    use: template.use,
    parameters: template.parameters.map((parameter) => ({ name: parameter.name, type: parameter.type, default: parameter.defaultValue })),
  }));
}

export function findTemplate(templateId: string): ManagedTemplate | undefined {
  return templatesById.get(templateId);
}

/** Resolves a template and its parameters into a validated rule. Throws `policy.template_unknown` for an unknown
 * id and `policy.parameter_invalid` (details name the parameter) for an unknown or ill-typed parameter. */
export function materializeTemplate(templateId: unknown, parameters?: unknown): MaterializedTemplate {
  const template = typeof templateId === 'string' ? templatesById.get(templateId) : undefined;
  if (template === undefined) {
    const shownId = typeof templateId === 'string' && templateId.length <= 64 ? templateId : undefined;
    throw new PredicateError('policy.template_unknown', { template_id: shownId, supported: templateIds });
  }
  const resolved = resolveParameters(template, parameters);
  const predicate: PredicateDocument = { version: 1, root: template.buildRoot(resolved) };
  // Validated like a document from a caller: a template can only ever produce a rule the validator accepts.
  const compiled = compilePredicate(predicate);
  return { templateId: template.templateId, parameters: resolved, predicate: compiled.document, humanSummary: template.summarize(resolved), compiled };
}

function resolveParameters(template: ManagedTemplate, given: unknown): TemplateParameters {
  if (given === undefined) given = {};
  if (!isJsonObject(given)) parameterInvalid({ parameter: null, reason: 'parameters is a JSON object' });
  const known = template.parameters.map((parameter) => parameter.name);
  for (const name of Object.keys(given)) {
    if (!known.includes(name)) {
      const shownName = name.length <= predicateKeyLengthMax ? name : `${name.slice(0, predicateKeyLengthMax)}…`;
      parameterInvalid({ parameter: shownName, reason: `unknown parameter of ${template.templateId}`, supported: known });
    }
  }
  const resolved: Record<string, TemplateParameterValue> = {};
  for (const parameter of template.parameters) {
    if (parameter.optional === true && !Object.hasOwn(given, parameter.name)) continue;
    const value = Object.hasOwn(given, parameter.name) ? given[parameter.name] : parameter.defaultValue;
    resolved[parameter.name] = checkParameter(parameter, value);
  }
  return Object.freeze(resolved);
}

function checkParameter(parameter: TemplateParameter, value: unknown): TemplateParameterValue {
  const { name, type } = parameter;
  switch (type) {
    case 'string[]': {
      const isPath = Array.isArray(value) && value.length >= 1 && value.length <= predicatePathSegmentsMax &&
        value.every((segment) => typeof segment === 'string' && segment.length <= predicateKeyLengthMax);
      if (!isPath) {
        parameterInvalid({ parameter: name, expected: `string[] of 1 to ${predicatePathSegmentsMax} keys of at most ${predicateKeyLengthMax} characters` });
      }
      return Object.freeze([...(value as string[])]);
    }
    case 'string':
      if (typeof value !== 'string' || value.length > templateStringParameterLengthMax) {
        parameterInvalid({ parameter: name, expected: `string of at most ${templateStringParameterLengthMax} characters` });
      }
      if (parameter.values !== undefined && !parameter.values.includes(value)) {
        parameterInvalid({ parameter: name, expected: `one of ${parameter.values.join(', ')}` });
      }
      return value;
    case 'integer': {
      const minimum = parameter.minimum ?? Number.MIN_SAFE_INTEGER;
      const maximum = parameter.maximum ?? Number.MAX_SAFE_INTEGER;
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum || value > maximum) {
        parameterInvalid({ parameter: name, expected: `integer from ${minimum} to ${maximum}` });
      }
      return value;
    }
  }
}

function parameterInvalid(details: PredicateErrorDetails): never {
  throw new PredicateError('policy.parameter_invalid', details);
}

/** How an intent bound to `templateId` with these (materialized) parameters settles on a passing rule, and under
 * `metered` where the evidence carries the cost. Only completion_budget_v1 meters: its rule holds the cost to an
 * integer within the amount (budget_cap at cost_path), so the part it releases rests on what the payee signed. */
export function releaseTermsOf(templateId: string, parameters: Readonly<Record<string, unknown>>): { releaseMode: ReleaseMode; meteredCostPath: readonly string[] | null } {
  if (templateId !== 'completion_budget_v1' || parameters['release_mode'] !== 'metered') return { releaseMode: 'full', meteredCostPath: null };
  const costPath = parameters['cost_path'] ?? ['cost_cents'];
  return { releaseMode: 'metered', meteredCostPath: [...(costPath as string[])] };
}
