// The agent tool policy document (`svc.policy.yaml`, docs/policy-documents.md): its shape as a table of field rules,
// and one walk over untrusted JSON that reports every problem as an issue `{path, code, message}` instead of stopping
// at the first. Pure: no Fastify, no database.
import { policyDocumentBytesMax, policyDocumentToolsMax, allowedToolsMax } from '../limits.ts';
import { canonicalJson } from '../signing/canonical-json.ts';

/** One problem of a document, where it is (a dotted path, `(root)` for the whole) and why. */
export interface PolicyIssue {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

export interface PolicyToolEntry {
  side_effecting?: boolean;
  max_spend_cents?: number;
  spend_from_args?: string;
  evidence_preset?: string;
  vendor_pack?: string;
  operation?: string;
}

export interface PolicyBinding {
  template_id?: string;
  version_seq?: number;
  head_digest?: string;
}

export interface PolicyIntentSection {
  policy_binding?: PolicyBinding;
  /** `currency`, `max_spend_usd`, and whatever else the author keeps there (the section is open). */
  budget?: { currency?: string; max_spend_usd?: number } & Record<string, unknown>;
  allowed_tools?: string[];
}

export interface PolicyAdapterSection {
  deny_provider_executed_tools?: boolean;
}

export interface PolicyExtends {
  org_policy_id: string;
  org_id: string;
  base_digest?: string;
  base_policy?: string;
}

export interface PolicyOverrides {
  default_deny?: boolean;
  tools?: Record<string, PolicyToolEntry>;
  intent?: PolicyIntentSection;
  adapter?: PolicyAdapterSection;
}

/** A document that passed `readPolicyDocument`: version 1 (flat), or 2 (an org base, or a tenant overlay that
 * `extends` one). A type rather than an interface, so that it is a JSON object wherever an answer takes one. */
export type PolicyDocument = {
  version: 1 | 2;
  name: string;
  default_deny: boolean;
  tools: Record<string, PolicyToolEntry>;
  intent?: PolicyIntentSection;
  adapter?: PolicyAdapterSection;
  extends?: PolicyExtends;
  overrides?: PolicyOverrides;
};

// ---- The shape, as data ----

type Rule =
  | { readonly kind: 'boolean' }
  | { readonly kind: 'integer'; readonly minimum: number }
  | { readonly kind: 'number'; readonly minimum: number }
  | { readonly kind: 'string'; readonly pattern: RegExp; readonly format: string }
  | { readonly kind: 'object'; readonly fields: Readonly<Record<string, Field>>; readonly open?: boolean; readonly nonEmpty?: boolean }
  | { readonly kind: 'record'; readonly key: Rule & { kind: 'string' }; readonly value: Rule; readonly entriesMax: number }
  | { readonly kind: 'array'; readonly items: Rule; readonly itemsMax: number };
type Field = Rule & { readonly required?: boolean };

const text = (pattern: RegExp, format: string) => ({ kind: 'string', pattern, format }) as const;
const policyName = text(/^[a-z][a-z0-9_-]{0,63}$/, 'a lowercase policy name');
const toolName = text(/^[a-z][a-z0-9_.-]{0,127}$/, 'a lowercase tool name (dots allowed)');
const identifier = text(/^[a-z0-9_]{1,64}$/, 'a snake_case identifier of 1 to 64 characters');
const headDigest = text(/^sha256:[0-9a-fA-F]{64}$/, 'sha256: and 64 hex digits');
const boolean = { kind: 'boolean' } as const;
const count = { kind: 'integer', minimum: 0 } as const;

const toolFields = {
  side_effecting: boolean,
  max_spend_cents: count,
  spend_from_args: text(/^[a-zA-Z_][a-zA-Z0-9_.]*$/, 'a dot-separated JSON path'),
  evidence_preset: identifier,
  vendor_pack: identifier,
  operation: text(/^.{1,128}$/s, '1 to 128 characters'),
};
const toolEntry: Rule = { kind: 'object', fields: { ...toolFields, side_effecting: { ...boolean, required: true } } };
const toolOverride: Rule = { kind: 'object', fields: toolFields, nonEmpty: true };
const tools = (value: Rule): Rule => ({ kind: 'record', key: toolName, value, entriesMax: policyDocumentToolsMax });

const bindingFields = { template_id: identifier, version_seq: { kind: 'integer', minimum: 1 }, head_digest: headDigest } as const;
const budget: Rule = {
  kind: 'object',
  open: true,
  fields: { currency: { ...text(/^[a-z]{3}$/, 'a lowercase ISO 4217 code'), required: true }, max_spend_usd: { kind: 'number', minimum: 0 } },
};
const allowedTools: Rule = { kind: 'array', items: toolName, itemsMax: allowedToolsMax };
const intentSection = (nonEmpty: boolean): Rule => ({
  kind: 'object',
  nonEmpty,
  fields: {
    policy_binding: nonEmpty
      ? { kind: 'object', fields: bindingFields, nonEmpty: true }
      : { kind: 'object', fields: { ...bindingFields, template_id: { ...identifier, required: true } } },
    budget,
    allowed_tools: allowedTools,
  },
});
const adapter: Rule = { kind: 'object', fields: { deny_provider_executed_tools: boolean }, nonEmpty: true };

const commonFields = {
  version: { kind: 'integer', minimum: 1, required: true },
  name: { ...policyName, required: true },
  default_deny: { ...boolean, required: true },
  tools: { ...tools(toolEntry), required: true },
  intent: intentSection(false),
  adapter,
} as const;

const documentRules: Record<1 | 2, Rule> = {
  1: { kind: 'object', fields: commonFields },
  2: {
    kind: 'object',
    fields: {
      ...commonFields,
      extends: {
        kind: 'object',
        fields: {
          org_policy_id: { ...policyName, required: true },
          org_id: { ...text(/^org_[a-z][a-z0-9_]{0,57}$/, 'org_ and a snake_case name'), required: true },
          base_digest: headDigest,
          base_policy: text(/^.{1,512}$/s, '1 to 512 characters'),
        },
      },
      overrides: {
        kind: 'object',
        nonEmpty: true,
        fields: { default_deny: boolean, tools: tools(toolOverride), intent: intentSection(true), adapter },
      },
    },
  },
};

// ---- The walk ----

const pathOf = (path: readonly string[]) => (path.length === 0 ? '(root)' : path.join('.'));
const typeName = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

function walk(value: unknown, rule: Rule, path: string[], issues: PolicyIssue[]): void {
  const at = pathOf(path);
  const wrongType = (expected: string): void => {
    issues.push({ path: at, code: 'policy.field_type', message: `must be ${expected}, not ${typeName(value)}` });
  };
  switch (rule.kind) {
    case 'boolean':
      if (typeof value !== 'boolean') wrongType('a boolean');
      return;
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value) || (rule.kind === 'integer' && !Number.isSafeInteger(value))) wrongType(rule.kind === 'integer' ? 'an integer' : 'a number');
      else if (value < rule.minimum) issues.push({ path: at, code: 'policy.field_range', message: `must be at least ${rule.minimum}` });
      return;
    case 'string':
      if (typeof value !== 'string') wrongType('a string');
      else if (!rule.pattern.test(value)) issues.push({ path: at, code: 'policy.field_format', message: `must be ${rule.format}` });
      return;
    case 'array':
      if (!Array.isArray(value)) return wrongType('an array');
      if (value.length > rule.itemsMax) issues.push({ path: at, code: 'policy.too_many', message: `holds at most ${rule.itemsMax} entries` });
      else value.forEach((item, index) => walk(item, rule.items, [...path, String(index)], issues));
      return;
    case 'record':
      if (!isObject(value)) return wrongType('an object');
      if (Object.keys(value).length > rule.entriesMax) {
        issues.push({ path: at, code: 'policy.too_many', message: `holds at most ${rule.entriesMax} entries` });
        return;
      }
      for (const [key, entry] of Object.entries(value)) {
        if (!rule.key.pattern.test(key)) issues.push({ path: pathOf([...path, key]), code: 'policy.field_format', message: `the name must be ${rule.key.format}` });
        else walk(entry, rule.value, [...path, key], issues);
      }
      return;
    case 'object':
      if (!isObject(value)) return wrongType('an object');
      for (const [name, field] of Object.entries(rule.fields)) {
        if (Object.hasOwn(value, name)) walk(value[name], field, [...path, name], issues);
        else if (field.required) issues.push({ path: pathOf([...path, name]), code: 'policy.field_required', message: 'is required' });
      }
      if (!rule.open) {
        for (const name of Object.keys(value)) {
          if (!Object.hasOwn(rule.fields, name)) issues.push({ path: pathOf([...path, name]), code: 'policy.field_unknown', message: 'is not a field of a policy document' });
        }
      }
      if (rule.nonEmpty && Object.keys(value).length === 0) issues.push({ path: at, code: 'policy.section_empty', message: 'must set at least one field' });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Rules across fields that the table cannot say. */
function crossFieldIssues(document: PolicyDocument, issues: PolicyIssue[]): void {
  const entries: [string, PolicyToolEntry][] = [
    ...Object.entries(document.tools).map(([name, entry]): [string, PolicyToolEntry] => [`tools.${name}`, entry]),
    ...Object.entries(document.overrides?.tools ?? {}).map(([name, entry]): [string, PolicyToolEntry] => [`overrides.tools.${name}`, entry]),
  ];
  for (const [path, entry] of entries) {
    if (entry.side_effecting === true && entry.evidence_preset === undefined) {
      issues.push({ path: `${path}.evidence_preset`, code: 'policy.missing_evidence_preset', message: 'a side-effecting tool must name the evidence preset its completion is proven by' });
    }
    if (entry.max_spend_cents !== undefined && entry.spend_from_args !== undefined) {
      issues.push({ path: `${path}.spend_from_args`, code: 'policy.spend_mode_conflict', message: 'max_spend_cents and spend_from_args exclude each other' });
    }
  }
  if (Object.keys(document.tools).length === 0 && !(document.version === 2 && document.extends !== undefined)) {
    issues.push({ path: 'tools', code: 'policy.tools_empty', message: 'must declare at least one tool (an overlay that extends an org base may declare none)' });
  }
}

/**
 * Reads an untrusted JSON value as a policy document. `document` is set only when there is no issue; `issues` lists
 * every problem found (a wrong version stops the walk, as the rest would be judged against the wrong shape).
 */
export function readPolicyDocument(raw: unknown): { document?: PolicyDocument; issues: PolicyIssue[] } {
  if (!isObject(raw)) return { issues: [{ path: '(root)', code: 'policy.field_type', message: `must be an object, not ${typeName(raw)}` }] };
  const version = raw.version;
  if (version !== 1 && version !== 2) {
    return { issues: [{ path: 'version', code: 'policy.version_unsupported', message: 'must be 1 or 2' }] };
  }
  let bytes: number;
  try {
    bytes = Buffer.byteLength(canonicalJson(raw));
  } catch {
    return { issues: [{ path: '(root)', code: 'policy.field_type', message: 'is not a JSON document' }] };
  }
  if (bytes > policyDocumentBytesMax) {
    return { issues: [{ path: '(root)', code: 'policy.document_too_large', message: `must be at most ${policyDocumentBytesMax} bytes of canonical JSON` }] };
  }
  const issues: PolicyIssue[] = [];
  walk(raw, documentRules[version], [], issues);
  if (issues.length > 0) return { issues };
  const document = raw as PolicyDocument;
  crossFieldIssues(document, issues);
  return issues.length > 0 ? { issues } : { document, issues };
}
