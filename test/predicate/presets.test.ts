// Archetype presets: the catalog of docs/predicates.md#archetype-presets, its schema digest, and each preset's template
// accepting evidence that follows the preset's schema (and refusing evidence that does not).
import { blake3 } from '@noble/hashes/blake3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/predicate/evaluate.ts';
import { archetypePresets, findPreset } from '../../src/predicate/presets.ts';
import { findTemplate, materializeTemplate } from '../../src/predicate/templates.ts';
import { canonicalJson } from '../../src/signing/canonical-json.ts';

type Schema = { type: string; properties: Record<string, { type: string }>; required: string[] };

describe('archetype presets', () => {
  it('are the five of the catalog with their templates and amounts', () => {
    expect(archetypePresets.map((preset) => [preset.presetId, preset.templateId, preset.recommendedAmountCents])).toEqual([
      ['api_response_ok', 'api_response_v1', 500],
      ['webhook_confirmed', 'webhook_confirmation_v1', 1000],
      ['artifact_attested', 'artifact_hash_v1', 2500],
      ['cost_and_completion', 'completion_budget_v1', 100],
      ['sandbox_permissive', 'true_v1', 100],
    ]);
    for (const preset of archetypePresets) expect(findTemplate(preset.templateId)).toBeDefined();
    expect(findPreset('cost_and_completion')?.templateId).toBe('completion_budget_v1');
    expect(findPreset('nope')).toBeUndefined();
  });

  it('have JSON Schema objects whose required fields are declared properties', () => {
    for (const preset of archetypePresets) {
      const schema = preset.evidenceSchema as Schema;
      expect(schema.type).toBe('object');
      for (const field of schema.required) expect(Object.keys(schema.properties)).toContain(field);
      expect(Object.isFrozen(schema.properties)).toBe(true);
    }
    expect((findPreset('sandbox_permissive')?.evidenceSchema as Schema).required).toEqual([]);
    expect((findPreset('artifact_attested')?.evidenceSchema as Schema).properties['artifact_blake3_hex']).toEqual({ type: 'array', items: { type: 'string' } });
  });

  it('cost_and_completion has the canonical schema digest the public client gives', () => {
    const schema = findPreset('cost_and_completion')?.evidenceSchema;
    const digest = bytesToHex(blake3(new TextEncoder().encode(canonicalJson(schema))));
    expect(digest).toBe('30a152fec1fa2965578938f26b82c805263f15e324db1be345453dc65598cc9c');
  });

  const conforming: Record<string, Record<string, unknown>> = {
    api_response_ok: { http_status: 200, vendor_ref_id: 'ref_1', response_digest: 'sha256:ab' },
    webhook_confirmed: { webhook_event_id: 'evt_1', event_type: 'payment.succeeded', payload_digest: 'sha256:cd' },
    artifact_attested: { artifact_blake3_hex: ['a'.repeat(64)], operation: 'attested', vendor_ref_id: 'ref_2' },
    cost_and_completion: { status: 'completed', cost_cents: 100 },
    sandbox_permissive: { confirmation_id: 'c', charged_cents: 1 },
  };
  // One field changed so the preset's template must refuse it (true_v1 refuses nothing).
  const broken: Record<string, Record<string, unknown>> = {
    api_response_ok: { http_status: 200, vendor_ref_id: 17, response_digest: 'sha256:ab' },
    webhook_confirmed: { webhook_event_id: 'evt_1', event_type: 'payment.failed', payload_digest: 'sha256:cd' },
    artifact_attested: { artifact_blake3_hex: [], operation: 'attested', vendor_ref_id: 'ref_2' },
    cost_and_completion: { status: 'completed', cost_cents: 101 },
  };

  it.each(archetypePresets.map((preset) => [preset.presetId, preset] as const))('%s: conforming evidence passes its template', (presetId, preset) => {
    const { compiled } = materializeTemplate(preset.templateId);
    const input = { evidenceSchema: preset.evidenceSchema, amountCents: preset.recommendedAmountCents };
    expect(evaluate(compiled, { ...input, evidence: conforming[presetId] }).passed).toBe(true);
    if (broken[presetId] !== undefined) expect(evaluate(compiled, { ...input, evidence: broken[presetId] }).passed).toBe(false);
  });
});
