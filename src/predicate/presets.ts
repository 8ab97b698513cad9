// The archetype presets (docs/predicates.md#archetype-presets): a template, a recommended amount and the evidence
// schema an agent's evidence should follow. Schemas are JSON Schema objects; `schema_field` reads their `properties`.
import type { JsonValue } from './ast.ts';
import { deepFreeze } from './json-value.ts';

export interface ArchetypePreset {
  readonly presetId: string;
  readonly templateId: string;
  readonly recommendedAmountCents: number;
  readonly evidenceSchema: JsonValue;
}

const stringType = { type: 'string' };
const integerType = { type: 'integer' };

// Property order follows §7.2; the canonical (sorted-key) JSON of `cost_and_completion`'s schema has the BLAKE3
// digest §7.2 gives, which test/predicate/presets.test.ts checks.
const presets: ArchetypePreset[] = [
  {
    presetId: 'api_response_ok',
    templateId: 'api_response_v1',
    recommendedAmountCents: 500,
    evidenceSchema: {
      type: 'object',
      properties: { http_status: integerType, vendor_ref_id: stringType, response_digest: stringType },
      required: ['http_status', 'vendor_ref_id', 'response_digest'],
    },
  },
  {
    presetId: 'webhook_confirmed',
    templateId: 'webhook_confirmation_v1',
    recommendedAmountCents: 1000,
    evidenceSchema: {
      type: 'object',
      properties: { webhook_event_id: stringType, event_type: stringType, payload_digest: stringType },
      required: ['webhook_event_id', 'event_type', 'payload_digest'],
    },
  },
  {
    presetId: 'artifact_attested',
    templateId: 'artifact_hash_v1',
    recommendedAmountCents: 2500,
    evidenceSchema: {
      type: 'object',
      properties: { artifact_blake3_hex: { type: 'array', items: stringType }, operation: stringType, vendor_ref_id: stringType },
      required: ['artifact_blake3_hex', 'operation', 'vendor_ref_id'],
    },
  },
  {
    presetId: 'cost_and_completion',
    templateId: 'completion_budget_v1',
    recommendedAmountCents: 100,
    evidenceSchema: {
      type: 'object',
      properties: { status: stringType, cost_cents: integerType },
      required: ['status', 'cost_cents'],
    },
  },
  {
    presetId: 'sandbox_permissive',
    templateId: 'true_v1',
    recommendedAmountCents: 100,
    evidenceSchema: {
      type: 'object',
      properties: { confirmation_id: stringType, charged_cents: integerType },
      required: [],
    },
  },
];

export const archetypePresets: readonly ArchetypePreset[] = deepFreeze(structuredClone(presets));

export function findPreset(presetId: string): ArchetypePreset | undefined {
  return archetypePresets.find((preset) => preset.presetId === presetId);
}
