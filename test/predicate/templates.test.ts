// Managed templates: materialized rules pinned per template, parameter defaults and overrides, parameter errors
// naming the parameter, and every materialization passing the validator and evaluating as intended.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/errors/catalogue.ts';
import { predicateKeyLengthMax, predicatePathSegmentsMax } from '../../src/limits.ts';
import { compilePredicate } from '../../src/predicate/compile.ts';
import { evaluate } from '../../src/predicate/evaluate.ts';
import { managedTemplates, materializeTemplate, templateCatalog, templateStringParameterLengthMax } from '../../src/predicate/templates.ts';
import { thrownServiceError } from './support.ts';

const schemaField = (field: string) => ({ op: 'schema_field', field });

describe('materialized rules with default parameters', () => {
  const cases: { templateId: string; root: unknown; parameters: Record<string, unknown>; summary: string }[] = [
    { templateId: 'true_v1', root: { op: 'true' }, parameters: {}, summary: 'Always releases, whatever the evidence.' },
    {
      templateId: 'completion_v1',
      root: { op: 'completion', path: ['status'], value: 'completed' },
      parameters: { status_path: ['status'], expected_status: 'completed' },
      summary: 'Releases when evidence status equals "completed".',
    },
    {
      templateId: 'completion_budget_v1',
      root: { op: 'and', clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }] },
      parameters: { status_path: ['status'], expected_status: 'completed', cost_path: ['cost_cents'] },
      summary: 'Releases when evidence status equals "completed" and evidence cost_cents is an integer no greater than the intent amount_cents.',
    },
    {
      templateId: 'api_response_v1',
      root: { op: 'and', clauses: [{ op: 'eq', path: ['http_status'], value: 200 }, schemaField('vendor_ref_id'), schemaField('response_digest')] },
      parameters: { http_status_path: ['http_status'], expected_http_status: 200 },
      summary: 'Releases when evidence http_status equals 200 and fields vendor_ref_id and response_digest have the types evidence_schema declares.',
    },
    {
      templateId: 'webhook_confirmation_v1',
      root: { op: 'and', clauses: [{ op: 'completion', path: ['event_type'], value: 'payment.succeeded' }, schemaField('webhook_event_id'), schemaField('payload_digest')] },
      parameters: { event_type_path: ['event_type'], expected_event_type: 'payment.succeeded' },
      summary: 'Releases when evidence event_type equals "payment.succeeded" and fields webhook_event_id and payload_digest have the types evidence_schema declares.',
    },
    {
      templateId: 'artifact_hash_v1',
      root: {
        op: 'and',
        clauses: [
          schemaField('artifact_blake3_hex'),
          { op: 'array_nonempty', field: 'artifact_blake3_hex' },
          { op: 'completion', path: ['operation'], value: 'attested' },
          schemaField('vendor_ref_id'),
        ],
      },
      parameters: { operation_path: ['operation'], expected_operation: 'attested' },
      summary:
        'Releases when field artifact_blake3_hex has the type evidence_schema declares and is a non-empty array, evidence operation equals "attested", and field vendor_ref_id has the type evidence_schema declares.',
    },
  ];

  it('covers exactly the six templates of the spec', () => {
    expect(managedTemplates.map((template) => template.templateId).sort()).toEqual(cases.map((item) => item.templateId).sort());
  });

  it.each(cases)('$templateId', ({ templateId, root, parameters, summary }) => {
    for (const given of [undefined, {}]) {
      const materialized = materializeTemplate(templateId, given);
      expect(materialized.predicate).toEqual({ version: 1, root });
      expect(materialized.parameters).toEqual(parameters);
      expect(materialized.humanSummary).toBe(summary);
      // The materialized rule passes the validator on its own, from its wire form.
      expect(compilePredicate(JSON.parse(JSON.stringify(materialized.predicate))).canonicalJson).toBe(materialized.compiled.canonicalJson);
    }
  });

  it('lists every template with its parameters and defaults', () => {
    const catalog = templateCatalog();
    expect(catalog.find((entry) => entry.template_id === 'completion_budget_v1')).toEqual({
      template_id: 'completion_budget_v1',
      use: 'Completion and cost within budget',
      parameters: [
        { name: 'status_path', type: 'string[]', default: ['status'] },
        { name: 'expected_status', type: 'string', default: 'completed' },
        { name: 'cost_path', type: 'string[]', default: ['cost_cents'] },
        { name: 'release_mode', type: 'string', default: 'full' },
      ],
    });
    expect(catalog.find((entry) => entry.template_id === 'true_v1')?.parameters).toEqual([]);
    expect(catalog.find((entry) => entry.template_id === 'api_response_v1')?.parameters.map((parameter) => parameter.type)).toEqual(['string[]', 'integer']);
  });
});

describe('parameters override defaults', () => {
  it.each([
    { templateId: 'completion_v1', parameters: { status_path: ['job', 'state'], expected_status: 'done' }, evidence: { job: { state: 'done' } } },
    { templateId: 'completion_budget_v1', parameters: { cost_path: ['total_cents'] }, evidence: { status: 'completed', total_cents: 100 } },
    { templateId: 'completion_budget_v1', parameters: { status_path: ['s'], expected_status: 'ok' }, evidence: { s: 'ok', cost_cents: 1 } },
    { templateId: 'api_response_v1', parameters: { http_status_path: ['response', 'status'], expected_http_status: 201 }, evidence: { response: { status: 201 }, vendor_ref_id: 'v', response_digest: 'd' } },
    { templateId: 'webhook_confirmation_v1', parameters: { expected_event_type: 'invoice.paid' }, evidence: { event_type: 'invoice.paid', webhook_event_id: 'w', payload_digest: 'p' } },
    { templateId: 'webhook_confirmation_v1', parameters: { event_type_path: ['type'] }, evidence: { type: 'payment.succeeded', webhook_event_id: 'w', payload_digest: 'p' } },
    { templateId: 'artifact_hash_v1', parameters: { operation_path: ['op'], expected_operation: 'signed' }, evidence: { op: 'signed', artifact_blake3_hex: ['ab'], vendor_ref_id: 'v' } },
  ])('$templateId with $parameters', ({ templateId, parameters, evidence }) => {
    const { compiled } = materializeTemplate(templateId, parameters);
    const evidenceSchema = {
      properties: Object.fromEntries(['vendor_ref_id', 'response_digest', 'webhook_event_id', 'payload_digest'].map((field) => [field, { type: 'string' }]).concat([['artifact_blake3_hex', { type: 'array' }]])),
    };
    expect(evaluate(compiled, { evidence, evidenceSchema, amountCents: 100 }).passed).toBe(true);
    // The defaults would not accept the same evidence, so the override is what made it pass.
    expect(evaluate(materializeTemplate(templateId).compiled, { evidence, evidenceSchema, amountCents: 100 }).passed).toBe(false);
  });

  it('a parameter path with keys that need escaping is kept as given', () => {
    const { predicate, humanSummary } = materializeTemplate('completion_v1', { status_path: ['a.b', 'c'] });
    expect(predicate.root).toEqual({ op: 'completion', path: ['a.b', 'c'], value: 'completed' });
    expect(humanSummary).toBe('Releases when evidence ["a.b"].c equals "completed".');
  });

  it('the resolved parameters are independent of the input', () => {
    const given = { status_path: ['status'] };
    const { parameters, compiled } = materializeTemplate('completion_v1', given);
    given.status_path[0] = 'other';
    expect(parameters['status_path']).toEqual(['status']);
    expect(evaluate(compiled, { evidence: { status: 'completed' }, evidenceSchema: {}, amountCents: 1 }).passed).toBe(true);
  });
});

describe('parameter errors name the parameter', () => {
  const tooLongPath = Array.from({ length: predicatePathSegmentsMax + 1 }, () => 'k');
  const cases: { templateId: string; parameters: unknown; parameter: string | null }[] = [
    { templateId: 'true_v1', parameters: { anything: 1 }, parameter: 'anything' },
    { templateId: 'completion_v1', parameters: { cost_path: ['c'] }, parameter: 'cost_path' },
    { templateId: 'completion_v1', parameters: { status_path: 'status' }, parameter: 'status_path' },
    { templateId: 'completion_v1', parameters: { status_path: [] }, parameter: 'status_path' },
    { templateId: 'completion_v1', parameters: { status_path: [1] }, parameter: 'status_path' },
    { templateId: 'completion_v1', parameters: { status_path: tooLongPath }, parameter: 'status_path' },
    { templateId: 'completion_v1', parameters: { status_path: ['k'.repeat(predicateKeyLengthMax + 1)] }, parameter: 'status_path' },
    { templateId: 'completion_v1', parameters: { expected_status: 1 }, parameter: 'expected_status' },
    { templateId: 'completion_v1', parameters: { expected_status: null }, parameter: 'expected_status' },
    { templateId: 'completion_v1', parameters: { expected_status: 'x'.repeat(templateStringParameterLengthMax + 1) }, parameter: 'expected_status' },
    { templateId: 'completion_budget_v1', parameters: { cost_path: [['cost']] }, parameter: 'cost_path' },
    { templateId: 'api_response_v1', parameters: { expected_http_status: '200' }, parameter: 'expected_http_status' },
    { templateId: 'api_response_v1', parameters: { expected_http_status: 200.5 }, parameter: 'expected_http_status' },
    { templateId: 'api_response_v1', parameters: { expected_http_status: 99 }, parameter: 'expected_http_status' },
    { templateId: 'api_response_v1', parameters: { expected_http_status: 600 }, parameter: 'expected_http_status' },
    { templateId: 'api_response_v1', parameters: { http_status_path: { 0: 'status' } }, parameter: 'http_status_path' },
    { templateId: 'webhook_confirmation_v1', parameters: { expected_event_type: ['payment.succeeded'] }, parameter: 'expected_event_type' },
    { templateId: 'webhook_confirmation_v1', parameters: { event_type_path: null }, parameter: 'event_type_path' },
    { templateId: 'artifact_hash_v1', parameters: { operation_path: [true] }, parameter: 'operation_path' },
    { templateId: 'artifact_hash_v1', parameters: { expected_operation: false }, parameter: 'expected_operation' },
    { templateId: 'artifact_hash_v1', parameters: JSON.parse('{"__proto__":{"expected_operation":"x"}}'), parameter: '__proto__' },
    { templateId: 'completion_v1', parameters: null, parameter: null },
    { templateId: 'completion_v1', parameters: ['status'], parameter: null },
  ];
  it.each(cases)('$templateId with $parameters → $parameter', ({ templateId, parameters, parameter }) => {
    const error = thrownServiceError(() => materializeTemplate(templateId, parameters));
    expect(error.code).toBe('policy.parameter_invalid');
    expect(error.statusCode).toBe(400);
    expect(error.details?.['parameter']).toBe(parameter);
  });

  it('accepts the bounds of every parameter', () => {
    for (const status of [100, 599]) {
      const root = materializeTemplate('api_response_v1', { expected_http_status: status }).predicate.root;
      expect(root.op === 'and' && root.clauses[0]).toEqual({ op: 'eq', path: ['http_status'], value: status });
    }
    const longest = Array.from({ length: predicatePathSegmentsMax }, () => 'k'.repeat(8));
    expect(materializeTemplate('completion_v1', { status_path: longest, expected_status: 'x'.repeat(templateStringParameterLengthMax) }).compiled.nodeCount).toBe(1);
  });

  it('an unknown parameter lists the known ones', () => {
    const error = thrownServiceError(() => materializeTemplate('completion_budget_v1', { budget_path: ['x'] }));
    expect(error.details).toEqual({ parameter: 'budget_path', reason: 'unknown parameter of completion_budget_v1', supported: ['status_path', 'expected_status', 'cost_path', 'release_mode'] });
  });

  it('parameters that are each valid but together too large give the document size error', () => {
    const path = Array.from({ length: predicatePathSegmentsMax }, () => '\u0001'.repeat(predicateKeyLengthMax));
    const error = thrownServiceError(() => materializeTemplate('completion_budget_v1', { status_path: path, cost_path: path }));
    expect(error.code).toBe('predicate.document_too_large');
  });

  it.each([['no_such_template_v1'], [''], [1], [undefined], ['__proto__'], ['toString']])('an unknown template %j → policy.template_unknown', (templateId) => {
    const error = thrownServiceError(() => materializeTemplate(templateId, {}));
    expect(error.code).toBe('policy.template_unknown');
    expect(error.statusCode).toBe(400);
    expect(error.details?.['supported']).toHaveLength(6);
  });
});

describe('the policy error codes', () => {
  it('are in the catalogue and in docs/errors.md with the same message', () => {
    const documented = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of ['policy.template_unknown', 'policy.parameter_invalid'] as const) {
      const entry = errorCatalogue[code];
      expect(documented).toContain(`| \`${code}\` | ${entry.status} | ${entry.message} |`);
    }
  });
});
