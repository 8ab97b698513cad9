// The JSON Schema (2020-12) of `svc.agent_receipt_v1`, served at /.well-known/agent-receipt-v1.json. Derived from
// the kind's field-order table (src/signing/artifact-kinds.ts), so the schema and the signer cannot drift apart:
// every object is closed (`additionalProperties: false`), which also refuses the fields a receipt must never carry.
import { artifactKinds, artifactSignatureAlgorithm, type FieldSpec } from '../signing/artifact-kinds.ts';

/** Fields that must never appear anywhere in an agent receipt (they would carry prompts, arguments or payloads). */
export const agentReceiptForbiddenFields = ['user_prompt', 'system_prompt', 'tool_arguments', 'tool_results', 'evidence_payload', 'payee_signature'] as const;

export const agentReceiptSchemaId = '/.well-known/agent-receipt-v1.json';

const formatSchemas: Record<string, Record<string, unknown>> = {
  scope_token: { pattern: '^[a-z0-9][a-z0-9._:/-]{0,127}$' },
  tenant_id: { pattern: '^[a-z0-9][a-z0-9._-]{0,255}$' },
  hex64: { pattern: '^[0-9a-f]{64}$' },
  uuid: { pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' },
  hex64_or_uuid: { pattern: '^([0-9a-f]{64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$' },
  rfc3339_seconds: { pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' },
  currency_mandate: { pattern: '^[a-z0-9_]{3,16}$' },
  currency_iso: { pattern: '^[a-z]{3}$' },
};

function stringSchema(field: Extract<FieldSpec, { type: 'string' }>): Record<string, unknown> {
  return {
    type: 'string',
    ...(field.format ? formatSchemas[field.format] : {}),
    ...(field.values ? { enum: [...field.values] } : {}),
    ...(field.nonEmpty ? { minLength: 1 } : {}),
  };
}

function fieldSchema(field: FieldSpec): Record<string, unknown> {
  switch (field.type) {
    case 'const':
      return { const: field.value };
    case 'string':
      return stringSchema(field);
    case 'integer':
      return { type: 'integer', ...(field.min === undefined ? {} : { minimum: field.min }) };
    case 'boolean':
      return { type: 'boolean' };
    case 'string_set': {
      const items = { type: 'array', items: { type: 'string', ...formatSchemas.scope_token }, uniqueItems: true };
      return field.emptyAsNull ? { oneOf: [items, { type: 'null' }] } : items;
    }
    case 'string_list':
      return { type: 'array', items: { type: 'string', ...(field.format ? formatSchemas[field.format] : {}) } };
    case 'object':
      return objectSchema(field.fields, []);
    case 'object_list': {
      const items = { type: 'array', items: objectSchema(field.fields, []) };
      return field.emptyAsNull ? { oneOf: [items, { type: 'null' }] } : items;
    }
    case 'json':
      return {};
    case 'string_or_null':
      return { oneOf: [{ type: 'string', ...(field.format ? formatSchemas[field.format] : {}) }, { type: 'null' }] };
  }
}

const isRequired = (field: FieldSpec): boolean => !('presence' in field) || field.presence === undefined || field.presence === 'required';

function objectSchema(fields: readonly FieldSpec[], extra: ReadonlyArray<readonly [string, Record<string, unknown>, boolean]>): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries([...fields.map((field) => [field.name, fieldSchema(field)]), ...extra.map(([name, schema]) => [name, schema])]),
    required: [...fields.filter(isRequired).map((field) => field.name), ...extra.filter(([, , required]) => required).map(([name]) => name)],
    additionalProperties: false,
  };
}

const hex = (length: number) => ({ type: 'string', pattern: `^[0-9a-f]{${length}}$` });

/** The schema document; `$id` is its address at `baseUrl`. */
export function agentReceiptJsonSchema(baseUrl: string): Record<string, unknown> {
  const kind = artifactKinds.get('svc.agent_receipt_v1')!;
  const body = objectSchema(kind.fields, [
    ['signing_algorithm', { const: artifactSignatureAlgorithm }, true],
    ['message_digest_sha256_hex', hex(64), true],
    ['signing_public_key_ed25519_hex', hex(64), true],
    ['ed25519_signature_hex', hex(128), true],
    ['operator_attestation', objectSchema([], [
      ['operator_did', { type: 'string', minLength: 1 }, true],
      ['signing_public_key_ed25519_hex', hex(64), true],
      ['message_digest_sha256_hex', hex(64), true],
      ['ed25519_signature_hex', hex(128), true],
    ]), false],
  ]);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${baseUrl}${agentReceiptSchemaId}`,
    title: 'svc.agent_receipt_v1',
    description: 'An agent receipt signed by the gateway (ed25519-sha256-json-v1). Every object is closed: no field outside this schema, and never '
      + `${agentReceiptForbiddenFields.join(', ')}.`,
    ...body,
  };
}
