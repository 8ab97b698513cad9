// The policy document routes over HTTP on a real Postgres, read the way the public client reads them: validation
// against the tenant's policy registry (the bound template rolled out, the pinned version and head, the release rules
// through the predicate validator), overlays resolved onto the registry's head, the effective policy its reload polls
// for (unchanged by digest), refusals, roles and another tenant's registry.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
let head: { version_seq: number; content_digest: string };

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
  // Two versions of completion_v1; the second is rolled out.
  for (const expected of ['completed', 'done']) {
    const draft = await post('/harbor/policy/v1/drafts', { template_id: 'completion_v1', parameters: { expected_status: expected } });
    expect(draft.statusCode, draft.body).toBeLessThan(300);
    head = draft.json();
  }
  expect((await post('/harbor/policy/v1/rollout', { template_id: 'completion_v1', version_seq: head.version_seq })).statusCode).toBeLessThan(300);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function post(url: string, payload: object, key = acme.adminKey): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, headers: bearer(key), payload });
}

const document = (fields: object = {}) => ({
  version: 1,
  name: 'travel-agent',
  default_deny: true,
  tools: { 'book.flight': { side_effecting: true, evidence_preset: 'cost_and_completion', max_spend_cents: 20_000 }, 'search.flights': { side_effecting: false } },
  intent: { policy_binding: { template_id: 'completion_v1' }, budget: { currency: 'usd', max_spend_usd: 400 }, allowed_tools: ['book.flight', 'search.flights'] },
  ...fields,
});
const overlay = (fields: object = {}) => ({
  version: 2,
  name: 'acme-travel',
  default_deny: false,
  extends: { org_policy_id: 'completion_v1', org_id: 'org_acme' },
  tools: { 'book.flight': { side_effecting: true, evidence_preset: 'cost_and_completion', max_spend_cents: 20_000 } },
  intent: { allowed_tools: ['book.flight'] },
  ...fields,
});

// ---- The client's parsers, learned from its source and written here ----

/** Its validate parser: issues need path, code and message; checks a name and a boolean; digest and report optional. */
function clientValidation(body: Record<string, any>) {
  const issue = (row: any) => (row && row.path && row.code && row.message ? { path: String(row.path), code: String(row.code), message: String(row.message) } : null);
  return {
    valid: Boolean(body.valid),
    local_valid: Boolean(body.local_valid),
    remote_valid: Boolean(body.remote_valid),
    policy_name: body.policy_name == null ? null : String(body.policy_name),
    tenant_id: String(body.tenant_id ?? ''),
    errors: (body.errors ?? []).map(issue).filter(Boolean),
    warnings: (body.warnings ?? []).map(issue).filter(Boolean),
    checks: (body.checks ?? []).filter((check: any) => check?.name && typeof check.passed === 'boolean'),
    effective_policy_digest: body.effective_policy_digest ?? undefined,
  };
}

/** Its effective-policy parser and the strict flat (version 1) schema it reads the effective policy with. */
function clientEffective(body: Record<string, any>) {
  expect(String(body.effective_policy_digest ?? '')).not.toBe('');
  expect(String(body.effective_policy_version ?? '')).not.toBe('');
  if (body.unchanged === true) return { unchanged: true, digest: body.effective_policy_digest };
  const policy = body.effective_policy;
  expect(Object.keys(policy).every((key) => ['version', 'name', 'default_deny', 'tools', 'intent', 'adapter'].includes(key))).toBe(true);
  expect(policy.version).toBe(1);
  expect(policy.name).toMatch(/^[a-z][a-z0-9_-]{0,63}$/);
  expect(typeof policy.default_deny).toBe('boolean');
  expect(Object.keys(policy.tools).length).toBeGreaterThan(0);
  for (const entry of Object.values<Record<string, unknown>>(policy.tools)) {
    expect(typeof entry.side_effecting).toBe('boolean');
    expect(Object.keys(entry).every((key) => ['side_effecting', 'max_spend_cents', 'spend_from_args', 'evidence_preset', 'vendor_pack', 'operation'].includes(key))).toBe(true);
  }
  if (policy.intent) expect(Object.keys(policy.intent).every((key) => ['policy_binding', 'budget', 'allowed_tools'].includes(key))).toBe(true);
  return { unchanged: false, digest: body.effective_policy_digest, policy, report: body.merge_report };
}

const codes = (issues: { path: string; code: string }[]) => issues.map((issue) => `${issue.path} ${issue.code}`);

describe('POST /v1/policy/validate', () => {
  it('accepts a document bound to the rolled-out head, with every check passed', async () => {
    const response = await post('/v1/policy/validate', document({ intent: { policy_binding: { template_id: 'completion_v1', version_seq: head.version_seq, head_digest: `sha256:${head.content_digest}` } } }));
    expect(response.statusCode, response.body).toBe(200);
    const result = clientValidation(response.json());
    expect(result).toMatchObject({ valid: true, local_valid: true, remote_valid: true, policy_name: 'travel-agent', tenant_id: acme.tenantId, errors: [], warnings: [] });
    expect(result.checks).toEqual([
      { name: 'document', passed: true }, { name: 'rules', passed: true }, { name: 'policy_binding', passed: true }, { name: 'release_rules', passed: true },
    ]);
    expect(result.effective_policy_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('answers the registry\'s problems as remote errors and warnings', async () => {
    const validate = async (binding: object) => clientValidation((await post('/v1/policy/validate', document({ intent: { policy_binding: binding } }))).json());
    const older = await validate({ template_id: 'completion_v1', version_seq: 1 });
    expect(older).toMatchObject({ valid: true, remote_valid: true });
    expect(codes(older.warnings)).toEqual(['intent.policy_binding.version_seq policy.binding_not_head']);

    const cases: [object, string][] = [
      [{ template_id: 'no_such_template' }, 'intent.policy_binding.template_id policy.unknown_policy_template'],
      [{ template_id: 'api_response_v1' }, 'intent.policy_binding.template_id policy.template_not_rolled_out'],
      [{ template_id: 'completion_v1', version_seq: 99 }, 'intent.policy_binding.version_seq policy.policy_version_not_found'],
      [{ template_id: 'completion_v1', head_digest: `sha256:${'0'.repeat(64)}` }, 'intent.policy_binding.head_digest policy.head_digest_mismatch'],
    ];
    for (const [binding, expected] of cases) {
      const result = await validate(binding);
      expect(result, JSON.stringify(binding)).toMatchObject({ valid: false, local_valid: true, remote_valid: false });
      expect(codes(result.errors)).toEqual([expected]);
      expect(result.checks.find((check: { name: string }) => check.name === 'policy_binding')?.passed).toBe(false);
    }
    // Another tenant's registry has no head of completion_v1: the same document is not valid there.
    const foreign = clientValidation((await post('/v1/policy/validate', document(), globex.adminKey)).json());
    expect(codes(foreign.errors)).toEqual(['intent.policy_binding.template_id policy.template_not_rolled_out']);
  });

  it('validates the bound release rule with the predicate validator', async () => {
    // A version whose stored rule no longer passes the validator (written past the service, as a damaged row would be):
    // the document binding it is refused, and the checks say which.
    const owner = new pg.Pool({ ...database.connection, max: 1 });
    try {
      await owner.query('ALTER TABLE policy_versions DISABLE TRIGGER policy_versions_immutable');
      await owner.query(`UPDATE policy_versions SET materialized_predicate = '{"version": 1, "root": {"op": "no_such_op"}}' WHERE tenant_id = $1 AND version_seq = 1`, [acme.tenantId]);
      await owner.query('ALTER TABLE policy_versions ENABLE TRIGGER policy_versions_immutable');
    } finally {
      await owner.end();
    }
    const result = clientValidation((await post('/v1/policy/validate', document({ intent: { policy_binding: { template_id: 'completion_v1', version_seq: 1 } } }))).json());
    expect(result).toMatchObject({ valid: false, local_valid: true, remote_valid: false });
    expect(codes(result.errors)).toEqual(['intent.policy_binding policy.release_rule_invalid']);
    expect(result.checks.find((check: { name: string }) => check.name === 'release_rules')?.passed).toBe(false);
  });

  it('answers a malformed document as local errors in a 200, and honours strict', async () => {
    const malformed = clientValidation((await post('/v1/policy/validate', { version: 1, name: 'X', default_deny: true, tools: { 'pay.vendor': { side_effecting: true } } })).json());
    expect(malformed).toMatchObject({ valid: false, local_valid: false, remote_valid: false, policy_name: 'X' });
    expect(codes(malformed.errors)).toEqual(['name policy.field_format']);
    expect(malformed.checks).toEqual([{ name: 'document', passed: false }]);

    const partlyAllowed = document({ intent: { allowed_tools: ['search.flights'] } });
    expect(clientValidation((await post('/v1/policy/validate', partlyAllowed)).json()).valid).toBe(true);
    const strict = clientValidation((await post('/v1/policy/validate?strict=1', partlyAllowed)).json());
    expect(codes(strict.errors)).toEqual(['tools.book.flight policy.side_effecting_not_allowed']);
    expect(strict).toMatchObject({ valid: false, local_valid: false });
  });

  it('resolves an overlay onto the registry\'s head with resolve_inheritance=1', async () => {
    const resolved = await post('/v1/policy/validate?resolve_inheritance=1', overlay());
    const body = resolved.json();
    expect(clientValidation(body)).toMatchObject({ valid: true, remote_valid: true });
    expect(body.merge_report).toMatchObject({ org_policy_id: 'completion_v1', org_id: 'org_acme', base_policy_name: 'completion_v1', overlay_policy_name: 'acme-travel', denied_widenings: [] });
    expect(body.checks.map((check: { name: string }) => check.name)).toEqual(['document', 'inheritance', 'rules', 'policy_binding', 'release_rules']);
    const effective = clientEffective((await post('/v1/org-policies/completion_v1/effective', overlay())).json());
    expect(body.effective_policy_digest).toBe(effective.digest);

    const downgraded = clientValidation((await post('/v1/policy/validate?resolve_inheritance=1', overlay({ intent: { policy_binding: { template_id: 'completion_v1', version_seq: 1 } } }))).json());
    expect(codes(downgraded.errors)).toEqual(['intent.policy_binding.version_seq policy.cannot_downgrade_template_version']);
    const unknown = clientValidation((await post('/v1/policy/validate?resolve_inheritance=1', overlay({ extends: { org_policy_id: 'api_response_v1', org_id: 'org_acme' } }))).json());
    expect(codes(unknown.errors)).toEqual(['extends.org_policy_id policy.org_policy_not_found']);
    // Without resolve_inheritance the overlay is judged as it stands, and has no effective digest.
    const alone = clientValidation((await post('/v1/policy/validate', overlay())).json());
    expect(alone).toMatchObject({ valid: true, effective_policy_digest: undefined });
  });
});

describe('POST /v1/org-policies/{policy_id}/effective', () => {
  it('merges the overlay onto the head: binding pinned, tools added, and unchanged by digest', async () => {
    const response = await post('/v1/org-policies/completion_v1/effective', overlay());
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      object: 'effective_policy', tenant_id: acme.tenantId, org_policy_id: 'completion_v1', unchanged: false,
      org_base_version_seq: head.version_seq, org_base_content_digest: head.content_digest,
    });
    const effective = clientEffective(body);
    expect(effective.policy).toEqual({
      version: 1,
      name: 'acme-travel',
      default_deny: true,
      tools: { 'book.flight': { side_effecting: true, evidence_preset: 'cost_and_completion', max_spend_cents: 20_000 } },
      intent: { policy_binding: { template_id: 'completion_v1', version_seq: head.version_seq, head_digest: `sha256:${head.content_digest}` }, allowed_tools: ['book.flight'] },
    });
    expect(body.effective_policy_version).toBe(`acme-travel@${effective.digest.slice(7, 15)}`);

    // The client's reload polls with the digest it holds: the same answers unchanged, without the document.
    const polled = await post(`/v1/org-policies/completion_v1/effective?digest=${encodeURIComponent(effective.digest)}`, overlay());
    expect(clientEffective(polled.json())).toEqual({ unchanged: true, digest: effective.digest });
    expect(polled.json().effective_policy).toBeUndefined();

    // A rollout moves the head: the same overlay now resolves to another effective policy.
    const draft = (await post('/harbor/policy/v1/drafts', { template_id: 'completion_v1', parameters: { expected_status: 'finished' } })).json();
    await post('/harbor/policy/v1/rollout', { template_id: 'completion_v1', version_seq: draft.version_seq });
    const moved = (await post(`/v1/org-policies/completion_v1/effective?digest=${encodeURIComponent(effective.digest)}`, overlay())).json();
    expect(moved).toMatchObject({ unchanged: false, org_base_version_seq: draft.version_seq });
    expect(moved.effective_policy_digest).not.toBe(effective.digest);
    head = draft;
  });

  it('refuses what is not an overlay of this policy, a widening, and an effective document that does not validate', async () => {
    const refused = async (url: string, body: object) => {
      const response = await post(url, body);
      return { status: response.statusCode, error: response.json().error };
    };
    expect(await refused('/v1/org-policies/completion_v1/effective', document())).toMatchObject({ status: 422, error: { code: 'policy.overlay_invalid', details: { issues: [{ path: 'extends' }] } } });
    expect(await refused('/v1/org-policies/completion_v1/effective', { version: 2 })).toMatchObject({ status: 422, error: { code: 'policy.overlay_invalid' } });
    expect(await refused('/v1/org-policies/api_response_v1/effective', overlay())).toMatchObject({ status: 422, error: { details: { issues: [{ code: 'policy.org_policy_mismatch' }] } } });
    const widened = await refused('/v1/org-policies/completion_v1/effective', overlay({ intent: { policy_binding: { template_id: 'api_response_v1' } } }));
    expect(widened).toMatchObject({ status: 422, error: { code: 'policy.widening_denied', details: { denied_widenings: [{ code: 'policy.cannot_change_org_template' }] } } });
    const empty = await refused('/v1/org-policies/completion_v1/effective', overlay({ tools: {} }));
    expect(empty).toMatchObject({ status: 422, error: { code: 'policy.effective_invalid', details: { issues: [{ path: 'tools', code: 'policy.tools_empty' }] } } });
  });

  it('answers 404 for a policy the tenant has not rolled out, and another tenant\'s', async () => {
    for (const [policyId, key] of [['api_response_v1', acme.adminKey], ['completion_v1', globex.adminKey], ['Not-A-Template', acme.adminKey]] as const) {
      const body = overlay({ extends: { org_policy_id: policyId.toLowerCase(), org_id: 'org_acme' } });
      const response = await post(`/v1/org-policies/${policyId.toLowerCase()}/effective`, body, key);
      expect(response.statusCode, policyId).toBe(404);
      expect(response.json().error.code).toBe('policy.org_policy_not_found');
    }
  });

  it('is a read for every role; restricted keys need the discovery scope', async () => {
    for (const role of ['operator', 'agent', 'auditor'] as const) {
      expect((await post('/v1/policy/validate', document(), await acme.key(role))).statusCode, role).toBe(200);
    }
    expect((await post('/v1/org-policies/completion_v1/effective', overlay(), await acme.key('agent', ['mcp.discovery:read']))).statusCode).toBe(200);
    expect((await post('/v1/policy/validate', document(), await acme.key('agent', ['mcp.sandbox:write']))).statusCode).toBe(403);
  });
});
