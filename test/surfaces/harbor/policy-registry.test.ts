// The policy registry over HTTP on a real Postgres: templates, preview, test, drafts, rollout, versions, the
// gateway rollback with its 428/409 rules, roles, and tenant isolation.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { canonicalJson } from '../../../src/signing/canonical-json.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection);
  globex = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const post = (key: string, url: string, payload: object) => app.inject({ method: 'POST', url, headers: bearer(key), payload });
const draft = (key: string, templateId: string, parameters: object = {}) => post(key, '/harbor/policy/v1/drafts', { template_id: templateId, parameters });
const versions = async (key: string, templateId: string) =>
  (await app.inject({ url: `/harbor/policy/v1/versions?template_id=${templateId}`, headers: bearer(key) })).json();

const opsOf = (clause: any): string[] => [clause.op, ...(clause.clauses ?? []).flatMap(opsOf), ...(clause.clause ? opsOf(clause.clause) : [])];

describe('templates and preview', () => {
  it('lists the six managed templates with their parameters', async () => {
    const body = (await app.inject({ url: '/harbor/policy/v1/templates', headers: bearer(acme.adminKey) })).json();
    expect(body.templates.map((template: { template_id: string }) => template.template_id).sort()).toEqual(
      ['api_response_v1', 'artifact_hash_v1', 'completion_budget_v1', 'completion_v1', 'true_v1', 'webhook_confirmation_v1'],
    );
  });

  it.each([
    ['true_v1', ['true']],
    ['completion_v1', ['completion']],
    ['completion_budget_v1', ['and', 'completion', 'budget_cap']],
    ['api_response_v1', ['and', 'eq', 'schema_field', 'schema_field']],
    ['webhook_confirmation_v1', ['and', 'completion', 'schema_field', 'schema_field']],
    ['artifact_hash_v1', ['and', 'schema_field', 'array_nonempty', 'completion', 'schema_field']],
  ])('previews %s as the spec\'s ops', async (templateId, ops) => {
    const response = await post(acme.adminKey, '/harbor/policy/v1/preview', { template_id: templateId });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.materialized_dsl.version).toBe(1);
    expect(opsOf(body.materialized_dsl.root).sort()).toEqual([...ops].sort());
    expect(body.human_summary.length).toBeGreaterThan(10);
  });

  it('names a bad parameter and an unknown template', async () => {
    const wrongType = await post(acme.adminKey, '/harbor/policy/v1/preview', { template_id: 'api_response_v1', parameters: { expected_http_status: '200' } });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error.code).toBe('policy.parameter_invalid');
    expect(JSON.stringify(wrongType.json().error.details)).toContain('expected_http_status');
    const unknownParameter = await post(acme.adminKey, '/harbor/policy/v1/preview', { template_id: 'true_v1', parameters: { colour: 'red' } });
    expect(unknownParameter.json().error.code).toBe('policy.parameter_invalid');
    const unknownTemplate = await post(acme.adminKey, '/harbor/policy/v1/preview', { template_id: 'nope_v9' });
    expect(unknownTemplate.statusCode).toBe(400);
    expect(unknownTemplate.json().error.code).toBe('policy.template_unknown');
  });
});

describe('test route', () => {
  const budgetRule = { template_id: 'completion_budget_v1', amount_cents: 500 };

  it('evaluates a template against evidence, with a trace', async () => {
    const passed = (await post(acme.adminKey, '/harbor/policy/v1/test', { ...budgetRule, evidence: { status: 'completed', cost_cents: 500 } })).json();
    expect(passed.predicate_evaluation.passed).toBe(true);
    expect(passed.predicate_evaluation.trace.length).toBeGreaterThan(0);
    const failed = (await post(acme.adminKey, '/harbor/policy/v1/test', { ...budgetRule, evidence: { status: 'completed', cost_cents: 501 } })).json();
    expect(failed.predicate_evaluation.passed).toBe(false);
    const budgetStep = failed.predicate_evaluation.trace.find((step: { kind: string }) => step.kind === 'budget_cap');
    expect(budgetStep.data).toMatchObject({ passed: false, observed: 501 });
  });

  it('evaluates an inline predicate_dsl, and refuses an invalid one with its code', async () => {
    const inline = await post(acme.adminKey, '/harbor/policy/v1/test', {
      predicate_dsl: { version: 1, root: { op: 'eq', path: ['http_status'], value: 200 } },
      evidence: { http_status: 200.0 },
    });
    expect(inline.json().predicate_evaluation.passed).toBe(true);
    const invalid = await post(acme.adminKey, '/harbor/policy/v1/test', { predicate_dsl: { version: 2, root: { op: 'true' } }, evidence: {} });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.code).toBe('predicate.version_unsupported');
  });

  it('needs exactly one of template_id and predicate_dsl', async () => {
    for (const body of [{ evidence: {} }, { template_id: 'true_v1', predicate_dsl: { version: 1, root: { op: 'true' } }, evidence: {} }]) {
      const response = await post(acme.adminKey, '/harbor/policy/v1/test', body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('request.invalid');
    }
  });
});

describe('drafts, rollout and versions', () => {
  it('numbers drafts 1, 2, … with the documented content digest, immutable', async () => {
    const first = (await draft(acme.adminKey, 'completion_v1', { expected_status: 'done' })).json();
    const second = (await draft(acme.adminKey, 'completion_v1')).json();
    expect([first.version_seq, second.version_seq]).toEqual([1, 2]);
    const expectedDigest = createHash('sha256').update(canonicalJson({
      template_id: 'completion_v1', version_seq: 1, parameters: first.parameters, materialized_predicate: first.materialized_predicate,
    })).digest('hex');
    expect(first.content_digest).toBe(expectedDigest);
    expect(first.parameters).toEqual({ status_path: ['status'], expected_status: 'done' });

    const system = new Database({ ...database.connection, max: 1 });
    // Two walls: the roles have no UPDATE grant, and a trigger stops even the owner.
    await expect(system.system((tx) => tx.query(`UPDATE policy_versions SET human_summary = 'x'`))).rejects.toThrow(/permission denied/);
    await expect(system.pool.query(`UPDATE policy_versions SET human_summary = 'x'`)).rejects.toThrow(/immutable/);
    await expect(system.pool.query(`DELETE FROM policy_versions`)).rejects.toThrow(/immutable/);
    await system.close();
  });

  it('gives concurrent drafts distinct numbers', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => draft(acme.adminKey, 'true_v1')));
    const seqs = responses.map((response) => response.json().version_seq).sort((a: number, b: number) => a - b);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('rolls a version out as head, checks an expected head, and 404s an unknown version', async () => {
    await draft(acme.adminKey, 'api_response_v1');
    const v2 = (await draft(acme.adminKey, 'api_response_v1', { expected_http_status: 201 })).json();
    const rolled = await post(acme.adminKey, '/harbor/policy/v1/rollout', { template_id: 'api_response_v1', version_seq: 1 });
    expect(rolled.json()).toMatchObject({ current_head_seq: 1, previous_head_seq: null });
    const stale = await post(acme.adminKey, '/harbor/policy/v1/rollout', { template_id: 'api_response_v1', version_seq: 2, expected_head_digest: v2.content_digest });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error.code).toBe('policy.head_moved');
    const head = (await versions(acme.adminKey, 'api_response_v1')).current_head_digest;
    const good = await post(acme.adminKey, '/harbor/policy/v1/rollout', { template_id: 'api_response_v1', version_seq: 2, expected_head_digest: `sha256:${head}` });
    expect(good.json()).toMatchObject({ current_head_seq: 2, previous_head_seq: 1, current_head_digest: v2.content_digest });
    const listed = await versions(acme.adminKey, 'api_response_v1');
    expect(listed.versions.map((version: any) => [version.version_seq, version.is_head])).toEqual([[2, true], [1, false]]);
    const missing = await post(acme.adminKey, '/harbor/policy/v1/rollout', { template_id: 'api_response_v1', version_seq: 99 });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('policy.version_not_found');
  });

  it('refuses a version number past the database integer as a bad request, not a server fault', async () => {
    for (const versionSeq of [2_147_483_648, 9_007_199_254_740_993]) {
      const rollout = await post(acme.adminKey, '/harbor/policy/v1/rollout', { template_id: 'api_response_v1', version_seq: versionSeq });
      expect(rollout.statusCode, rollout.body).toBe(400);
      expect(rollout.json().error.code).toBe('request.invalid');
      const page = await app.inject({ url: `/harbor/policy/v1/versions?template_id=api_response_v1&cursor=${versionSeq}`, headers: bearer(acme.adminKey) });
      expect(page.statusCode, page.body).toBe(400);
    }
  });

  it('pages versions with next_cursor', async () => {
    const page = (await app.inject({ url: '/harbor/policy/v1/versions?template_id=true_v1&limit=4', headers: bearer(acme.adminKey) })).json();
    expect(page.versions.map((version: any) => version.version_seq)).toEqual([10, 9, 8, 7]);
    const next = (await app.inject({ url: `/harbor/policy/v1/versions?template_id=true_v1&limit=4&cursor=${page.next_cursor}`, headers: bearer(acme.adminKey) })).json();
    expect(next.versions.map((version: any) => version.version_seq)).toEqual([6, 5, 4, 3]);
  });
});

describe('declared order', () => {
  // The catalogue's own order, as a client builds it from GET /templates and compares as JSON text.
  const catalogueDefaults = async (key: string) => {
    const body = (await app.inject({ url: '/harbor/policy/v1/templates', headers: bearer(key) })).json();
    return new Map<string, Record<string, unknown>>(body.templates.map((template: { template_id: string; parameters: { name: string; default: unknown }[] }) =>
      // release_mode is optional and left out of a rule's parameters when not given, so that rules drafted without it
      // keep their content digest (docs/predicates.md).
      [template.template_id, Object.fromEntries(template.parameters.filter((parameter) => parameter.name !== 'release_mode').map((parameter) => [parameter.name, parameter.default]))]));
  };

  it('gives parameters and the materialized rule in the template\'s order on every route that returns them', async () => {
    const tenant = await createTestTenant(database.connection);
    const defaults = await catalogueDefaults(tenant.adminKey);
    // completion_budget_v1 is the case Postgres jsonb reorders (cost_path is its shortest key), and every template
    // puts `version` after `root`.
    for (const [templateId, parameters] of defaults) {
      const preview = (await post(tenant.adminKey, '/harbor/policy/v1/preview', { template_id: templateId })).json();
      expect(JSON.stringify(preview.parameters), templateId).toBe(JSON.stringify(parameters));
      const drafted = (await draft(tenant.adminKey, templateId)).json();
      expect(JSON.stringify(drafted.parameters), templateId).toBe(JSON.stringify(parameters));
      expect(JSON.stringify(drafted.materialized_predicate), templateId).toBe(JSON.stringify(preview.materialized_dsl));
      const [listed] = (await versions(tenant.adminKey, templateId)).versions;
      expect(JSON.stringify(listed.parameters), templateId).toBe(JSON.stringify(parameters));
      expect(JSON.stringify(listed.materialized_predicate), templateId).toBe(JSON.stringify(preview.materialized_dsl));
      expect(Object.keys(listed.materialized_predicate)).toEqual(['version', 'root']);
    }
    // Given parameters in another order, a version still shows the template's.
    const given = (await draft(tenant.adminKey, 'completion_budget_v1', { cost_path: ['total_cents'], expected_status: 'done', status_path: ['state'] })).json();
    expect(Object.keys(given.parameters)).toEqual(['status_path', 'expected_status', 'cost_path']);
  });
});

describe('gateway rollback', () => {
  it('needs the three preconditions (428), a current expected head (409), a known target (404), then moves the head', async () => {
    const v1 = (await draft(acme.adminKey, 'webhook_confirmation_v1')).json();
    const v2 = (await draft(acme.adminKey, 'webhook_confirmation_v1', { expected_event_type: 'invoice.paid' })).json();
    await post(acme.adminKey, '/harbor/policy/v1/rollout', { template_id: 'webhook_confirmation_v1', version_seq: 2 });
    const rollback = (body: object) => post(acme.adminKey, '/v1/policy/rollback', { template_id: 'webhook_confirmation_v1', ...body });

    const full = { expected_head_digest: v2.content_digest, target_digest: v1.content_digest, confirm: true };
    for (const missing of ['expected_head_digest', 'target_digest', 'confirm']) {
      const { [missing]: _left, ...partial } = full as Record<string, unknown>;
      const response = await rollback(partial);
      expect(response.statusCode).toBe(428);
      expect(response.json().error).toMatchObject({ code: 'policy.rollback_precondition_required', details: { missing: [missing] } });
    }
    expect((await rollback({ ...full, confirm: false })).statusCode).toBe(428);

    const moved = await rollback({ ...full, expected_head_digest: v1.content_digest });
    expect(moved.statusCode).toBe(409);
    expect(moved.json().error.details.current_head_seq).toBe(2);
    const unknownTarget = await rollback({ ...full, target_digest: 'ab'.repeat(32) });
    expect(unknownTarget.statusCode).toBe(404);

    const done = await rollback(full);
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ current_head_seq: 1, previous_head_seq: 2, current_head_digest: v1.content_digest });
    expect((await rollback(full)).statusCode).toBe(409);

    const system = new Database({ ...database.connection, max: 1 });
    const moves = await system.system(async (tx) => (await tx.query(
      `SELECT action, from_version_seq, to_version_seq FROM policy_head_moves WHERE template_id = 'webhook_confirmation_v1' ORDER BY moved_at`,
    )).rows);
    await system.close();
    expect(moves).toEqual([
      { action: 'rollout', from_version_seq: null, to_version_seq: 2 },
      { action: 'rollback', from_version_seq: 2, to_version_seq: 1 },
    ]);
  });
});

describe('roles and tenants', () => {
  it('lets agents read, preview and test, but not draft; only admins roll back', async () => {
    const agent = await acme.key('agent');
    expect((await app.inject({ url: '/harbor/policy/v1/templates', headers: bearer(agent) })).statusCode).toBe(200);
    expect((await post(agent, '/harbor/policy/v1/preview', { template_id: 'true_v1' })).statusCode).toBe(200);
    expect((await draft(agent, 'true_v1')).statusCode).toBe(403);
    const operator = await acme.key('operator');
    expect((await draft(operator, 'true_v1')).statusCode).toBe(201);
    const rollback = await post(operator, '/v1/policy/rollback', { template_id: 'true_v1', expected_head_digest: 'a'.repeat(64), target_digest: 'b'.repeat(64), confirm: true });
    expect(rollback.statusCode).toBe(403);
  });

  it('keeps each tenant\'s policies its own', async () => {
    const theirs = await versions(globex.adminKey, 'api_response_v1');
    expect(theirs).toMatchObject({ current_head_seq: null, versions: [] });
    const rollout = await post(globex.adminKey, '/harbor/policy/v1/rollout', { template_id: 'api_response_v1', version_seq: 1 });
    expect(rollout.statusCode).toBe(404);
    const ours = await versions(acme.adminKey, 'api_response_v1');
    const rollback = await post(globex.adminKey, '/v1/policy/rollback', {
      template_id: 'api_response_v1', expected_head_digest: ours.current_head_digest, target_digest: ours.versions[1].content_digest, confirm: true,
    });
    expect(rollback.statusCode).toBe(409);
    expect(rollback.json().error.details).toEqual({ current_head_seq: null, current_head_digest: null });
    expect((await versions(acme.adminKey, 'api_response_v1')).current_head_seq).toBe(2);
  });
});
