// The spend controls over HTTP on a real Postgres, read the way the public client reads them: the preflight (its
// budget-remaining and explain-policy tools and CLI commands) agrees with /verify on the same intent and reserves
// nothing; the admin reads (its `control` command's spend and denial panels) list the real decisions and
// reservations, newest first, paged, filtered, and scoped to the caller's tenant.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilityDenyCodes } from '../../../src/contracts/spend-decisions.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const post = (url: string, payload: object, key = acme.adminKey) => app.inject({ method: 'POST', url, headers: bearer(key), payload });
const get = (url: string, key = acme.adminKey) => app.inject({ url, headers: bearer(key) });
const json = (response: LightMyRequestResponse) => {
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
};

/** A funded sandbox intent of `amount` cents for one tool, with its capability token. */
async function sandboxIntent(amount: number, operation = 'search.web', key = acme.adminKey): Promise<{ intentId: string; token: string }> {
  const boot = json(await post('/v1/sandbox/guardrails/bootstrap', { operation, requested_spend_cents: amount }, key));
  return { intentId: boot.intent_id, token: boot.capability_token };
}

// ---- The client's reading code, as its MCP server and CLI run it (learned from its source, written here) ----

/** Its get_budget_remaining tool and `spend budget-remaining` command: three members of the preflight answer. */
const budgetRemaining = (body: Record<string, unknown>) => ({
  remaining_cents: body.remaining_cents ?? null,
  spend_scope: body.spend_scope ?? null,
  policy_version: body.policy_version ?? null,
});

/** Its explain_policy tool: the outcome normalized to allow / approval_required / deny, from outcome or classification. */
function explainPolicy(body: Record<string, unknown>) {
  const normalized = String(body.outcome ?? '').trim().toLowerCase();
  const classification = String(body.classification ?? '').trim().toLowerCase();
  const outcome = ['allow', 'anomaly_observe'].includes(normalized) ? 'allow'
    : ['approval_required', 'anomaly_escalate'].includes(normalized) ? 'approval_required'
      : normalized === 'deny' ? 'deny'
        : classification === 'allow' ? 'allow' : classification === 'hold' ? 'approval_required' : 'deny';
  const reasonCodes = Array.isArray(body.reason_codes) ? body.reason_codes.map(String) : [];
  return { outcome, reason_codes: reasonCodes, explanation: String(body.explanation ?? ''), remaining_cents: body.remaining_cents ?? null };
}

/** Its `control` command's rows: `items` or `data`, whichever is an array. */
function rowsOf(body: Record<string, unknown>): Record<string, unknown>[] {
  for (const key of ['items', 'data']) if (Array.isArray(body[key])) return body[key] as Record<string, unknown>[];
  return [];
}

describe('POST /v1/spend/preflight', () => {
  it('answers what /verify would, with every failed check, and reserves nothing', async () => {
    const { intentId, token } = await sandboxIntent(500);
    const preflight = async (body: object) => json(await post('/v1/spend/preflight', { intent_id: intentId, ...body }));
    const verify = async (body: object) => json(await post('/verify', { intent_id: intentId, token, ...body }));

    const allowed = await preflight({ operation: 'Search.Web ', requested_spend_cents: 200 });
    expect(allowed).toMatchObject({
      object: 'spend_preflight', tenant_id: acme.tenantId, intent_id: intentId, operation: 'search.web', requested_spend_cents: 200,
      outcome: 'allow', classification: 'allow', code: null, reason_codes: [], remaining_cents: 500, amount_cents: 500,
      reserved_cents: 0, consumed_cents: 0, currency: 'usd', state: 'funded', allowed_tools: ['search.web'],
      spend_scope: { scope_type: 'intent', scope_key: intentId }, policy_version: 1,
    });
    expect(allowed.explanation).toMatch(/^Allowed: 500 usd cents remain/);
    expect(budgetRemaining(allowed)).toEqual({ remaining_cents: 500, spend_scope: { scope_type: 'intent', scope_key: intentId }, policy_version: 1 });
    expect(explainPolicy(allowed)).toMatchObject({ outcome: 'allow', reason_codes: [] });
    // Nothing reserved: a second preflight still sees 500, and no reservation exists.
    expect((await preflight({ operation: 'search.web', requested_spend_cents: 200 })).remaining_cents).toBe(500);
    expect(json(await get(`/v1/admin/spend-controls/reservations?intent_id=${intentId}`)).data).toEqual([]);

    // A real reservation, then the same questions of both: the preflight's first code is the verify's code.
    expect((await verify({ operation: 'search.web', requested_spend_cents: 400 })).allow).toBe(true);
    const cases = [
      { operation: 'search.web', requested_spend_cents: 100 },
      { operation: 'search.web', requested_spend_cents: 101 },
      { operation: 'maps.route', requested_spend_cents: 1 },
      { operation: 'search.web', requested_spend_cents: 1, currency: 'eur' },
    ];
    for (const body of cases) {
      const dry = await preflight(body);
      const real = await verify(body);
      expect(dry.code, JSON.stringify(body)).toBe(real.code);
      expect(dry.outcome === 'allow', JSON.stringify(body)).toBe(real.allow);
      if (real.allow) await post(`/v1/spend/decisions/${real.decision_id}/complete`, { outcome: 'released' });
    }

    // Every failed check at once, in /verify's order; the client's explain tool reads it as a deny.
    const all = await preflight({ operation: 'maps.route', requested_spend_cents: 10_000, currency: 'eur' });
    expect(all.reason_codes).toEqual(['capability.operation_not_allowed', 'capability.currency_mismatch', 'capability.budget_exceeded']);
    expect(all.code).toBe('capability.operation_not_allowed');
    expect(all.reason_codes.every((code: string) => (capabilityDenyCodes as readonly string[]).includes(code))).toBe(true);
    expect(explainPolicy(all)).toMatchObject({ outcome: 'deny', remaining_cents: 100 });
    expect(all.explanation).toMatch(/^Denied: /);
  });

  it('defaults the operation to any tool and the amount to 0, as the client sends them', async () => {
    const { intentId } = await sandboxIntent(300, 'maps.route');
    const body = json(await post('/v1/spend/preflight', { intent_id: intentId }));
    expect(body).toMatchObject({ operation: '*', requested_spend_cents: 0, outcome: 'allow', remaining_cents: 300 });
    // The budget alone: any tool, so no operation check, and the whole amount fits.
    const budget = json(await post('/v1/spend/preflight', { intent_id: intentId, operation: '*', requested_spend_cents: 300 }));
    expect(budget.outcome).toBe('allow');
  });

  it('says revoked once the intent is settled, and 404 for an unknown or another tenant\'s intent', async () => {
    const { intentId } = await sandboxIntent(100);
    json(await post(`/v1/sandbox/guardrails/${intentId}/evidence`, { payload: { status: 'completed' } }));
    const settled = json(await post('/v1/spend/preflight', { intent_id: intentId, operation: 'search.web' }));
    expect(settled).toMatchObject({ state: 'released', outcome: 'deny', code: 'capability.revoked' });

    for (const [id, key] of [['00000000-0000-4000-8000-000000000009', acme.adminKey], [intentId, globex.adminKey]] as const) {
      const response = await post('/v1/spend/preflight', { intent_id: id }, key);
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('intent.not_found');
    }
  });

  it('refuses a malformed request with 400 and lets every role read', async () => {
    const { intentId } = await sandboxIntent(100);
    for (const body of [{ intent_id: 'not-a-uuid' }, { intent_id: intentId, requested_spend_cents: -1 }, { intent_id: intentId, token: 'x' }]) {
      const response = await post('/v1/spend/preflight', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
    }
    for (const role of ['operator', 'agent', 'auditor'] as const) {
      expect((await post('/v1/spend/preflight', { intent_id: intentId }, await acme.key(role))).statusCode, role).toBe(200);
    }
    const restricted = await acme.key('agent', ['mcp.discovery:read']);
    expect((await post('/v1/spend/preflight', { intent_id: intentId }, restricted)).statusCode).toBe(200);
    const noScope = await acme.key('agent', ['mcp.sandbox:write']);
    expect((await post('/v1/spend/preflight', { intent_id: intentId }, noScope)).json().error.code).toBe('auth.scope_insufficient');
  });
});

describe('GET /v1/admin/spend-controls/…', () => {
  it('policy: the rules /verify enforces, as the control panel reads them', async () => {
    const body = json(await get('/v1/admin/spend-controls/policy'));
    expect(body).toEqual({
      object: 'spend_control_policy', tenant_id: acme.tenantId, source: 'intent_capability', configured: true, mode: 'enforce',
      policy_version: 1, updated_at: null, reservation_hold: 'until_completed',
      checks: capabilityDenyCodes.map((code) => ({ code, description: expect.any(String) })),
    });
  });

  it('decisions and reservations: the real rows, newest first, paged and filtered, the caller\'s tenant only', async () => {
    const tenant = await createTestTenant(database.connection, 'sandbox');
    const { intentId, token } = await sandboxIntent(1000, 'search.web', tenant.adminKey);
    const decisionIds: string[] = [];
    for (const cents of [100, 200, 300]) {
      const verdict = json(await post('/verify', { intent_id: intentId, token, operation: 'search.web', requested_spend_cents: cents }, tenant.adminKey));
      decisionIds.push(verdict.decision_id);
    }
    json(await post(`/v1/spend/decisions/${decisionIds[0]}/complete`, { outcome: 'consumed' }, tenant.adminKey));
    json(await post(`/v1/spend/decisions/${decisionIds[1]}/complete`, { outcome: 'released' }, tenant.adminKey));

    const decisions = json(await get('/v1/admin/spend-controls/decisions?limit=10', tenant.adminKey));
    const rows = rowsOf(decisions);
    expect(rows.map((row) => row.id)).toEqual([...decisionIds].reverse());
    expect(rows.map((row) => row.status)).toEqual(['reserved', 'released', 'consumed']);
    expect(rows[0]).toMatchObject({ intent_id: intentId, operation: 'search.web', amount_cents: 300, currency: 'usd', outcome: 'allow', reason_codes: [] });
    expect(decisions).toMatchObject({ object: 'list', has_more: false, next_cursor: null });

    // Pages of one, by cursor, visit the same rows.
    const firstPage = json(await get('/v1/admin/spend-controls/decisions?limit=1', tenant.adminKey));
    expect(firstPage).toMatchObject({ has_more: true, next_cursor: decisionIds[2] });
    const secondPage = json(await get(`/v1/admin/spend-controls/decisions?limit=1&cursor=${firstPage.next_cursor}`, tenant.adminKey));
    expect(rowsOf(secondPage).map((row) => row.id)).toEqual([decisionIds[1]]);
    expect(rowsOf(json(await get('/v1/admin/spend-controls/decisions?status=consumed', tenant.adminKey))).map((row) => row.id)).toEqual([decisionIds[0]]);

    // The control panel asks for active reservations: the one still reserved.
    const active = json(await get('/v1/admin/spend-controls/reservations?status=active&limit=10', tenant.adminKey));
    expect(rowsOf(active)).toEqual([{
      object: 'spend_reservation', id: decisionIds[2], decision_id: decisionIds[2], intent_id: intentId, operation: 'search.web',
      amount_cents: 300, currency: 'usd', status: 'active', created_at: expect.any(String), completed_at: null, expires_at: null,
    }]);
    expect(rowsOf(json(await get('/v1/admin/spend-controls/reservations', tenant.adminKey))).length).toBe(1);
    expect(rowsOf(json(await get('/v1/admin/spend-controls/reservations?status=all', tenant.adminKey))).map((row) => row.status)).toEqual(['active', 'released', 'consumed']);

    // Another tenant sees none of it, even with this tenant's intent or decision id in the query.
    for (const url of ['/v1/admin/spend-controls/decisions', `/v1/admin/spend-controls/decisions?intent_id=${intentId}`, `/v1/admin/spend-controls/decisions?cursor=${decisionIds[2]}`, '/v1/admin/spend-controls/reservations?status=all']) {
      expect(rowsOf(json(await get(url, globex.adminKey))), url).toEqual([]);
    }
  });

  it('is for admins, operators and auditors', async () => {
    expect((await get('/v1/admin/spend-controls/decisions', await acme.key('auditor'))).statusCode).toBe(200);
    const agent = await get('/v1/admin/spend-controls/decisions', await acme.key('agent'));
    expect(agent.statusCode).toBe(403);
    expect((await get('/v1/admin/spend-controls/reservations?status=later')).statusCode).toBe(400);
  });
});
