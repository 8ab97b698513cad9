// POST /verify and spend decisions over HTTP on a real Postgres: an allow reserves the spend and says what is
// left; every deny code from a real cause (tampered, foreign, mis-audienced and expired tokens, another tenant's
// token, another intent's token, a tool not allowed, a budget exceeded, a settled intent); 20 concurrent verifies
// reserve exactly the budget; completion consumed/released with its idempotency and 409/404; idempotency keys.
import { readFileSync } from 'node:fs';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtAudiences, signGatewayJwt } from '../../src/credentials/gateway-jwt.ts';
import { Database } from '../../src/infra/database.ts';
import { ephemeralKeyring, type GatewayKeyring } from '../../src/infra/gateway-keys.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { capabilityDenyCodes } from '../../src/services/capability-service.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type CreateOptions } from '../helpers/intents.ts';

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let keyring: GatewayKeyring;
let acme: TestTenant;
let globex: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  keyring = ephemeralKeyring();
  app = await buildTestApp(database.connection, { gatewayKeys: keyring });
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

const post = (url: string, payload: object, headers: Record<string, string> = {}, key = acme.adminKey) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(key), ...headers }, payload });

interface Funded {
  readonly intentId: string;
  readonly token: string;
}

/** Creates a signed intent and funds it through the x402 sandbox simulator, as a client does. */
async function fundedIntent(tenant: TestTenant = acme, options: Partial<CreateOptions> = {}): Promise<Funded> {
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, ...options });
  const intentId = body.intent_id as string;
  expect((await post('/harbor/intents', body, {}, tenant.adminKey)).statusCode).toBe(201);
  const challenge = await post(`/harbor/intents/${intentId}/fund`, {}, {}, tenant.adminKey);
  expect(challenge.statusCode).toBe(402);
  const paymentSignature = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
  const funded = await post(`/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': paymentSignature }, tenant.adminKey);
  expect(funded.statusCode, funded.body).toBe(200);
  return { intentId, token: funded.json().capability_token as string };
}

const verify = (body: Record<string, unknown>, headers: Record<string, string> = {}, key = acme.adminKey) => post('/verify', body, headers, key);
const complete = (decisionId: string, outcome: string, key = acme.adminKey) => post(`/v1/spend/decisions/${decisionId}/complete`, { outcome }, {}, key);

/** A well-formed deny: 200, allow false, the code also as the one reason code, no decision. */
function expectDeny(response: LightMyRequestResponse, code: string, tenant: TestTenant = acme) {
  expect(response.statusCode, response.body).toBe(200);
  const answer = response.json();
  expect(answer).toMatchObject({ allow: false, tenant: tenant.tenantId, code, reason_codes: [code] });
  expect(answer.audit_id).toMatch(uuidPattern);
  expect(typeof answer.message).toBe('string');
  expect(typeof answer.remaining_cents).toBe('number');
  expect(answer).not.toHaveProperty('decision_id');
  return answer;
}

async function reservations(intentId: string): Promise<{ status: string; cents: number }[]> {
  return db.system(async (tx) =>
    (await tx.query<{ status: string; cents: number }>('SELECT status, requested_cents::int AS cents FROM spend_decisions WHERE intent_id = $1 ORDER BY created_at', [intentId])).rows,
  );
}

describe('POST /verify allows', () => {
  it('reserves the requested spend and answers the decision, the audit id and what is left', async () => {
    const { intentId, token } = await fundedIntent();
    const response = await verify({ intent_id: intentId, token, operation: '  Search.Web ', requested_spend_cents: 120, tool_call_id: 'call-1' });
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json();
    expect(answer).toMatchObject({
      allow: true, tenant: acme.tenantId, intent_id: intentId, code: null, reason_codes: [], remaining_cents: 380,
      operation: 'search.web', requested_spend_cents: 120,
    });
    expect(answer.decision_id).toMatch(uuidPattern);
    expect(answer.audit_id).toMatch(uuidPattern);
    expect(await reservations(intentId)).toEqual([{ status: 'reserved', cents: 120 }]);

    // requested_spend_cents defaults to 0: still a decision, reserving nothing.
    const free = (await verify({ intent_id: intentId, token, operation: 'search.web' })).json();
    expect(free).toMatchObject({ allow: true, remaining_cents: 380, requested_spend_cents: 0 });
    expect(free.audit_id).not.toBe(answer.audit_id);
  });

  it('is for spending roles: an auditor is refused, and a restricted key needs mcp.spend:write', async () => {
    const { intentId, token } = await fundedIntent();
    const auditor = await verify({ intent_id: intentId, token, operation: 'search.web' }, {}, await acme.key('auditor'));
    expect([auditor.statusCode, auditor.json().error.code]).toEqual([403, 'auth.role_insufficient']);
    const unscoped = await verify({ intent_id: intentId, token, operation: 'search.web' }, {}, await acme.key('agent', ['mcp.sandbox:write']));
    expect([unscoped.statusCode, unscoped.json().error.code]).toEqual([403, 'auth.scope_insufficient']);
    const scoped = await verify({ intent_id: intentId, token, operation: 'search.web' }, {}, await acme.key('agent', ['mcp.spend:write']));
    expect(scoped.json().allow).toBe(true);
  });

  it('answers 400, not a deny, for a malformed request', async () => {
    const { intentId, token } = await fundedIntent();
    for (const body of [
      { intent_id: intentId, token },
      { intent_id: intentId, token, operation: 'search.web', requested_spend_cents: -1 },
      { intent_id: intentId, token, operation: 'search.web', requested_spend_cents: '100' },
      { intent_id: intentId, token, operation: 'search.web', tenant_id: acme.tenantId },
    ]) {
      const response = await verify(body);
      expect([response.statusCode, response.json().error.code]).toEqual([400, 'request.invalid']);
    }
  });
});

describe('GET /harbor/intents/{id}/budget', () => {
  it('reads what is left without reserving anything, counts reserved and consumed apart, and 404s another tenant', async () => {
    const { intentId, token } = await fundedIntent();
    const budget = async (key = acme.adminKey) => app.inject({ url: `/harbor/intents/${intentId}/budget`, headers: bearer(key) });
    expect((await budget()).json()).toEqual({
      object: 'intent_budget', tenant_id: acme.tenantId, intent_id: intentId, state: 'funded', currency: 'usd',
      amount_cents: 500, reserved_cents: 0, consumed_cents: 0, remaining_cents: 500, released_cents: null, refunded_cents: null,
    });
    const first = (await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 120 })).json();
    await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 100 });
    expect((await complete(first.decision_id, 'consumed')).statusCode).toBe(200);
    // Reading twice reserves nothing: the same figures, and the next verify still sees 280 left.
    for (let read = 0; read < 2; read += 1) {
      expect((await budget(await acme.key('auditor'))).json()).toMatchObject({ reserved_cents: 100, consumed_cents: 120, remaining_cents: 280 });
    }
    expect((await verify({ intent_id: intentId, token, operation: 'search.web' })).json().remaining_cents).toBe(280);
    const foreign = await budget(globex.adminKey);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('intent.not_found');
  });
});

describe('POST /verify denies', () => {
  it('capability.invalid_signature: a tampered token, a token of another keyring, a session token', async () => {
    const { intentId, token } = await fundedIntent();
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
    const inflated = Buffer.from(JSON.stringify({ ...claims, amount_cents: 1_000_000 })).toString('base64url');
    const flipped = `${signature!.slice(0, 10)}${signature![10] === 'A' ? 'B' : 'A'}${signature!.slice(11)}`;
    const sameClaims = { intent_id: intentId, allowed_tools: claims.allowed_tools, amount_cents: 500, currency: 'usd' };
    const options = { subject: intentId, tenantId: acme.tenantId, expiresInSeconds: 600 };
    const foreign = await signGatewayJwt(ephemeralKeyring(), sameClaims, { ...options, audience: jwtAudiences.capability });
    const session = await signGatewayJwt(keyring, sameClaims, { ...options, audience: jwtAudiences.session });
    for (const presented of [`${header}.${inflated}.${signature}`, `${header}.${payload}.${flipped}`, foreign, session, 'cap-dev-offline-1']) {
      const answer = expectDeny(await verify({ intent_id: intentId, token: presented, operation: 'search.web', requested_spend_cents: 1 }), 'capability.invalid_signature');
      expect(answer.remaining_cents).toBe(0);
    }
    expect(await reservations(intentId)).toEqual([]);
  });

  it('capability.expired: a token past its exp', async () => {
    const { intentId, token } = await fundedIntent();
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
    const expired = await signGatewayJwt(
      keyring,
      { intent_id: intentId, allowed_tools: claims.allowed_tools, amount_cents: 500, currency: 'usd' },
      { audience: jwtAudiences.capability, subject: intentId, tenantId: acme.tenantId, expiresInSeconds: 60, now: new Date(Date.now() - 2 * 3_600_000) },
    );
    expectDeny(await verify({ intent_id: intentId, token: expired, operation: 'search.web' }), 'capability.expired');
  });

  it('capability.wrong_tenant: another tenant\'s token at this tenant\'s credential, without saying anything of its intent', async () => {
    const theirs = await fundedIntent(globex);
    const answer = expectDeny(await verify({ intent_id: theirs.intentId, token: theirs.token, operation: 'search.web', requested_spend_cents: 1 }), 'capability.wrong_tenant');
    expect(answer.remaining_cents).toBe(0);
    expect(answer.intent_id).toBe(theirs.intentId);
    expect(await reservations(theirs.intentId)).toEqual([]);
    // The owner's own credential is allowed.
    expect((await verify({ intent_id: theirs.intentId, token: theirs.token, operation: 'search.web' }, {}, globex.adminKey)).json().allow).toBe(true);
  });

  it('capability.intent_mismatch: intent X\'s token presented for intent Y, for an unknown id, for another tenant\'s intent', async () => {
    const x = await fundedIntent();
    const y = await fundedIntent();
    const theirs = await fundedIntent(globex);
    for (const intentId of [y.intentId, '00000000-0000-4000-8000-000000000001', theirs.intentId, 'not-a-uuid']) {
      const answer = expectDeny(await verify({ intent_id: intentId, token: x.token, operation: 'search.web', requested_spend_cents: 1 }), 'capability.intent_mismatch');
      expect(answer).toMatchObject({ intent_id: intentId, remaining_cents: 0 });
    }
    expect(await reservations(y.intentId)).toEqual([]);
  });

  it('capability.operation_not_allowed: a tool outside allowed_tools', async () => {
    const { intentId, token } = await fundedIntent();
    const answer = expectDeny(await verify({ intent_id: intentId, token, operation: 'payments.transfer', requested_spend_cents: 1 }), 'capability.operation_not_allowed');
    expect(answer.remaining_cents).toBe(500);
  });

  it('capability.currency_mismatch: a spend in another currency than the intent\'s', async () => {
    const { intentId, token } = await fundedIntent();
    expectDeny(await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 1, currency: 'eur' }), 'capability.currency_mismatch');
    expect((await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 1, currency: 'USD' })).json().allow).toBe(true);
  });

  it('capability.budget_exceeded: more than the amount, and more than what the reservations leave', async () => {
    const { intentId, token } = await fundedIntent();
    expectDeny(await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 501 }), 'capability.budget_exceeded');
    expect((await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 300 })).json()).toMatchObject({ allow: true, remaining_cents: 200 });
    const answer = expectDeny(await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 201 }), 'capability.budget_exceeded');
    expect(answer.remaining_cents).toBe(200);
    expect((await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 200 })).json()).toMatchObject({ allow: true, remaining_cents: 0 });
  });

  it('capability.revoked: the intent released; nothing is left, and the open reservation was consumed by the release', async () => {
    const { intentId, token } = await fundedIntent();
    const reserved = (await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 150 })).json();
    expect(reserved.allow).toBe(true);
    const evidence = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed' } }));
    expect(evidence.statusCode, evidence.body).toBe(200);
    // Evidence recorded but not settled: the capability is still live.
    expect((await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 50 })).json()).toMatchObject({ allow: true, remaining_cents: 300 });
    expect((await post(`/harbor/intents/${intentId}/settlement/confirm`, {})).json().state).toBe('released');
    const answer = expectDeny(await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 1 }), 'capability.revoked');
    expect(answer.remaining_cents).toBe(0);
    // The settlement closed the open reservations within the released amount: completing one as consumed answers it
    // as it stands; as released, it is the other outcome.
    expect((await complete(reserved.decision_id, 'consumed')).json().status).toBe('consumed');
    expect((await complete(reserved.decision_id, 'released')).statusCode).toBe(409);
    const report = await verifyTenantLedger(db, acme.tenantId);
    expect(report.problems).toEqual([]);
  });

  it('documents every deny code in docs/capabilities.md', () => {
    const documented = readFileSync(new URL('../../docs/capabilities.md', import.meta.url), 'utf8');
    for (const code of capabilityDenyCodes) expect(documented).toContain(`\`${code}\``);
  });
});

describe('reservations close at settlement (docs/capabilities.md#reservations)', () => {
  const budget = async (intentId: string) => {
    const response = await app.inject({ url: `/harbor/intents/${intentId}/budget`, headers: bearer(acme.adminKey) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const preflight = async (intentId: string) => {
    const response = await post('/v1/spend/preflight', { intent_id: intentId });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  /** The reservation list of the spend controls for one intent, oldest first, by status. */
  const listed = async (intentId: string) => {
    const response = await app.inject({ url: `/v1/admin/spend-controls/reservations?status=all&limit=100&intent_id=${intentId}`, headers: bearer(acme.adminKey) });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json().data as Array<{ status: string; amount_cents: number }>).reverse().map((row) => ({ status: row.status, cents: row.amount_cents }));
  };
  const reserve = async (intentId: string, token: string, cents: number) => {
    const verdict = (await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: cents })).json();
    expect(verdict.allow, JSON.stringify(verdict)).toBe(true);
    return verdict.decision_id as string;
  };
  const evidence = async (intentId: string, payload: Record<string, unknown>) => {
    const recorded = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload }));
    expect(recorded.statusCode, recorded.body).toBe(200);
  };
  const confirm = async (intentId: string) => {
    const settled = await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
    expect(settled.statusCode, settled.body).toBe(200);
    return settled.json();
  };
  /** A completion_budget_v1 version with release_mode metered, rolled out: an intent bound to it (v7) splits. */
  async function meteredPolicy(): Promise<NonNullable<CreateOptions['policy']>> {
    const drafted = await post('/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1', parameters: { release_mode: 'metered' } });
    expect(drafted.statusCode, drafted.body).toBe(201);
    const rolled = await post('/harbor/policy/v1/rollout', { template_id: 'completion_budget_v1', version_seq: drafted.json().version_seq });
    expect(rolled.statusCode, rolled.body).toBe(200);
    const version = drafted.json();
    return { templateId: 'completion_budget_v1', versionSeq: version.version_seq, contentDigestHex: version.content_digest, materializedPredicate: version.materialized_predicate };
  }
  /** After settlement the budget read, the preflight and the reservation list agree: nothing reserved, nothing left. */
  async function expectClosed(intentId: string, consumed: number, parts: { released: number; refunded: number }) {
    const read = await budget(intentId);
    expect(read).toMatchObject({ reserved_cents: 0, consumed_cents: consumed, remaining_cents: 0, released_cents: parts.released, refunded_cents: parts.refunded });
    expect(await preflight(intentId)).toMatchObject({ reserved_cents: 0, consumed_cents: consumed, remaining_cents: 0, outcome: 'deny', code: 'capability.revoked' });
    const rows = await listed(intentId);
    expect(rows.some((row) => row.status === 'active')).toBe(false);
    expect(rows.filter((row) => row.status === 'consumed').reduce((sum, row) => sum + row.cents, 0)).toBe(consumed);
    return rows;
  }

  it('a release consumes the open reservations', async () => {
    const { intentId, token } = await fundedIntent();
    await reserve(intentId, token, 150);
    await reserve(intentId, token, 50);
    expect(await budget(intentId)).toMatchObject({ reserved_cents: 200, consumed_cents: 0, remaining_cents: 300, released_cents: null, refunded_cents: null });
    await evidence(intentId, { status: 'completed' });
    expect(await confirm(intentId)).toMatchObject({ state: 'released', released_cents: 500, refunded_cents: 0 });
    expect(await reservations(intentId)).toEqual([{ status: 'consumed', cents: 150 }, { status: 'consumed', cents: 50 }]);
    expect(await expectClosed(intentId, 200, { released: 500, refunded: 0 })).toEqual([{ status: 'consumed', cents: 150 }, { status: 'consumed', cents: 50 }]);
  });

  it('a refund releases the open reservations back; what the tool consumed before stays consumed', async () => {
    const { intentId, token } = await fundedIntent();
    const used = await reserve(intentId, token, 60);
    expect((await complete(used, 'consumed')).statusCode).toBe(200);
    await reserve(intentId, token, 100);
    await evidence(intentId, { status: 'failed' });
    expect(await confirm(intentId)).toMatchObject({ state: 'refunded', released_cents: 0, refunded_cents: 500 });
    expect(await reservations(intentId)).toEqual([{ status: 'consumed', cents: 60 }, { status: 'released', cents: 100 }]);
    await expectClosed(intentId, 60, { released: 0, refunded: 500 });
  });

  it('a split consumes the reservation of the released part and returns the rest: consumed = released_cents', async () => {
    // The README's metered tool: 120 of 250 reserved (130 left), the payee signs a cost of 120.
    const { intentId, token } = await fundedIntent(acme, { policy: await meteredPolicy(), amountCents: 250 });
    await reserve(intentId, token, 120);
    expect(await budget(intentId)).toMatchObject({ reserved_cents: 120, consumed_cents: 0, remaining_cents: 130 });
    await evidence(intentId, { status: 'completed', cost_cents: 120 });
    expect(await confirm(intentId)).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });
    expect(await reservations(intentId)).toEqual([{ status: 'consumed', cents: 120 }]);
    await expectClosed(intentId, 120, { released: 120, refunded: 130 });
  });

  it('a split whose reservations exceed the released part consumes them oldest first while they fit, and releases the rest', async () => {
    const { intentId, token } = await fundedIntent(acme, { policy: await meteredPolicy(), amountCents: 250 });
    for (const cents of [100, 50, 20]) await reserve(intentId, token, cents);
    await evidence(intentId, { status: 'completed', cost_cents: 120 });
    expect(await confirm(intentId)).toMatchObject({ state: 'resolved_split', released_cents: 120, refunded_cents: 130 });
    // 100 fits within 120; 100 + 50 does not; 100 + 20 would, but the close goes by running total, oldest first.
    const closed = await reservations(intentId);
    expect(closed).toEqual([{ status: 'consumed', cents: 100 }, { status: 'released', cents: 50 }, { status: 'released', cents: 20 }]);
    await expectClosed(intentId, 100, { released: 120, refunded: 130 });
    const report = await verifyTenantLedger(db, acme.tenantId);
    expect(report.problems).toEqual([]);
  });
});

describe('reservations under concurrency', () => {
  it('20 concurrent verifies of 100 cents on a 500-cent intent allow exactly 5', async () => {
    const { intentId, token } = await fundedIntent();
    const answers = (await Promise.all(
      Array.from({ length: 20 }, (_, index) => verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 100, tool_call_id: `call-${index}` })),
    )).map((response) => {
      expect(response.statusCode).toBe(200);
      return response.json();
    });
    const allowed = answers.filter((answer) => answer.allow);
    expect(allowed).toHaveLength(5);
    expect(new Set(allowed.map((answer) => answer.decision_id)).size).toBe(5);
    expect(allowed.map((answer) => answer.remaining_cents).sort((a, b) => a - b)).toEqual([0, 100, 200, 300, 400]);
    for (const denied of answers.filter((answer) => !answer.allow)) expect(denied).toMatchObject({ code: 'capability.budget_exceeded', remaining_cents: 0 });
    const rows = await reservations(intentId);
    expect(rows).toHaveLength(5);
    expect(rows.reduce((sum, row) => sum + row.cents, 0)).toBe(500);
    expect(new Set(answers.map((answer) => answer.audit_id)).size).toBe(20);
  });
});

describe('POST /v1/spend/decisions/{id}/complete', () => {
  it('consumed counts for good, released frees the cents; the same outcome again is the same answer; the other is 409', async () => {
    const { intentId, token } = await fundedIntent();
    const first = (await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 200 })).json();
    const second = (await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 300 })).json();
    expect(second.remaining_cents).toBe(0);

    const consumed = await complete(first.decision_id, 'consumed');
    expect(consumed.statusCode, consumed.body).toBe(200);
    expect(consumed.json()).toEqual({
      decision_id: first.decision_id, intent_id: intentId, status: 'consumed', requested_spend_cents: 200, completed_at: expect.any(String),
      // The call's action receipt (test/protocol/receipts.test.ts checks its content).
      agent_receipt: expect.objectContaining({ kind: 'svc.agent_receipt_v1', scope: 'action' }),
    });
    const again = await complete(first.decision_id, 'consumed');
    expect([again.statusCode, again.body]).toEqual([200, consumed.body]);
    const other = await complete(first.decision_id, 'released');
    expect([other.statusCode, other.json().error.code]).toEqual([409, 'spend_decision.already_completed']);

    const released = await complete(second.decision_id, 'released');
    expect(released.json()).toMatchObject({ status: 'released', requested_spend_cents: 300 });
    expect((await complete(second.decision_id, 'consumed')).statusCode).toBe(409);
    // The released 300 are free again; the consumed 200 are not.
    expect((await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 300 })).json()).toMatchObject({ allow: true, remaining_cents: 0 });
    expect(await reservations(intentId)).toEqual([
      { status: 'consumed', cents: 200 },
      { status: 'released', cents: 300 },
      { status: 'reserved', cents: 300 },
    ]);
  });

  it('answers 404 for another tenant\'s or an unknown decision, 400 for a bad outcome', async () => {
    const { intentId, token } = await fundedIntent();
    const decision = (await verify({ intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 10 })).json();
    for (const [decisionId, key] of [[decision.decision_id, globex.adminKey], ['00000000-0000-4000-8000-000000000002', acme.adminKey]] as const) {
      const response = await complete(decisionId, 'consumed', key);
      expect([response.statusCode, response.json().error.code]).toEqual([404, 'spend_decision.not_found']);
    }
    const bad = await complete(decision.decision_id, 'refunded');
    expect([bad.statusCode, bad.json().error.code]).toEqual([400, 'request.invalid']);
    expect(await reservations(intentId)).toEqual([{ status: 'reserved', cents: 10 }]);
  });
});

describe('idempotency of /verify', () => {
  it('a retried verify with the same key returns the same decision and reserves once (header or body key)', async () => {
    const { intentId, token } = await fundedIntent();
    const body = { intent_id: intentId, token, operation: 'search.web', requested_spend_cents: 100, idempotency_key: 'verify-call-7' };
    const headers = { 'idempotency-key': 'verify-call-7' };
    const first = await verify(body, headers);
    const replay = await verify(body, headers);
    expect(first.json().allow).toBe(true);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    // The body key alone is the same key.
    const bodyOnly = await verify(body);
    expect(bodyOnly.json().decision_id).toBe(first.json().decision_id);
    expect(await reservations(intentId)).toEqual([{ status: 'reserved', cents: 100 }]);

    const reused = await verify({ ...body, requested_spend_cents: 50 });
    expect([reused.statusCode, reused.json().error.code]).toEqual([409, 'idempotency.key_reused']);
    const differing = await verify(body, { 'idempotency-key': 'another-key' });
    expect([differing.statusCode, differing.json().error.code]).toEqual([400, 'request.invalid']);
    expect(await reservations(intentId)).toHaveLength(1);
  });
});
