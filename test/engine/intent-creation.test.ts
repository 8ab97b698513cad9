// POST /harbor/intents and the intent reads over HTTP on a real Postgres: signed v6 and v7 envelopes, the
// signing-version gate, forged and tampered signatures, rule validation, live-mode key registration,
// idempotency, and tenant isolation.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
let live: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
  live = await createTestTenant(database.connection, 'live');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const create = (tenant: TestTenant, body: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/harbor/intents', headers: { ...bearer(tenant.adminKey), ...headers }, payload: body });

describe('creating intents', () => {
  it('creates a v6 intent from a signed envelope', async () => {
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    const response = await create(acme, body);
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      object: 'intent', tenant: acme.tenantId, tenant_id: acme.tenantId, intent_id: body.intent_id, state: 'open', funded: false,
      signing_version: 6, amount_cents: 500, currency: 'usd', principal_key_registered: false, policy_binding: null,
      allowed_tools: ['harbor.evidence_submit', 'search.web'],
    });
    const read = await app.inject({ url: `/harbor/intents/${body.intent_id}`, headers: bearer(acme.adminKey) });
    expect(read.json()).toMatchObject({ intent_id: body.intent_id, state: 'open', predicate_dsl: body.predicate_dsl });
  });

  it('creates a v7 intent bound to the policy head, and refuses a binding to anything else', async () => {
    const draft = async () => (await app.inject({
      method: 'POST', url: '/harbor/policy/v1/drafts', headers: bearer(acme.adminKey), payload: { template_id: 'completion_budget_v1' },
    })).json();
    const v1 = await draft();
    const v2 = await draft();
    await app.inject({ method: 'POST', url: '/harbor/policy/v1/rollout', headers: bearer(acme.adminKey), payload: { template_id: 'completion_budget_v1', version_seq: 2 } });
    const bind = (version: any) => ({
      templateId: 'completion_budget_v1', versionSeq: version.version_seq, contentDigestHex: version.content_digest, materializedPredicate: version.materialized_predicate,
    });
    const good = await create(acme, signedCreateBody({ tenantId: acme.tenantId, principal, payee, policy: bind(v2) }));
    expect(good.statusCode).toBe(201);
    expect(good.json()).toMatchObject({ signing_version: 7, policy_binding: { template_id: 'completion_budget_v1', version_seq: 2, content_digest: v2.content_digest } });
    const notHead = await create(acme, signedCreateBody({ tenantId: acme.tenantId, principal, payee, policy: bind(v1) }));
    expect(notHead.statusCode).toBe(422);
    expect(notHead.json().error).toMatchObject({ code: 'intent.policy_binding_invalid', details: { current_head_seq: 2 } });
  });

  it.each([
    [4, 'signing.version_deprecated'],
    [5, 'signing.version_deprecated'],
    [8, 'signing.version_unsupported'],
    ['6', 'signing.version_unsupported'],
  ])('refuses signing version %s with %s, before looking at the rest', async (version, code) => {
    const response = await create(acme, { signing_version: version, anything: 'else' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe(code);
  });

  it('refuses a tampered envelope, a signature made for another tenant, and a swapped payee key', async () => {
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    for (const tampered of [
      { ...body, amount_cents: 50_000 },
      { ...body, allowed_tools: ['anything'] },
      { ...body, payee_pubkey: party('did:payee:mallory').publicKeyBase64 },
      signedCreateBody({ tenantId: acme.tenantId, signForTenantId: globex.tenantId, principal, payee }),
    ]) {
      const response = await create(acme, tampered);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('signing.signature_invalid');
    }
  });

  it('validates the rule, the schema, the deadline and the body shape with specific codes', async () => {
    const cases: Array<[object, number, string]> = [
      [signedCreateBody({ tenantId: acme.tenantId, principal, payee, predicate: { version: 2, root: { op: 'true' } } }), 400, 'predicate.version_unsupported'],
      [signedCreateBody({ tenantId: acme.tenantId, principal, payee, predicate: { version: 1, root: { op: 'regex' } } }), 400, 'predicate.op_unknown'],
      [signedCreateBody({ tenantId: acme.tenantId, principal, payee, evidenceSchema: { type: 'object', properties: { id: { type: 'string', pattern: '(a+)+$' } } } }), 400, 'intent.evidence_schema_invalid'],
      [signedCreateBody({ tenantId: acme.tenantId, principal, payee, deadline: '2020-01-01T00:00:00Z' }), 422, 'intent.deadline_invalid'],
      [{ ...signedCreateBody({ tenantId: acme.tenantId, principal, payee }), deadline: 'tomorrow' }, 400, 'signing.value_invalid'],
      [{ ...signedCreateBody({ tenantId: acme.tenantId, principal, payee }), amount_cents: '500' }, 400, 'request.invalid'],
      [{ ...signedCreateBody({ tenantId: acme.tenantId, principal, payee }), intent_id: 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa' }, 400, 'signing.value_invalid'],
      [{ ...signedCreateBody({ tenantId: acme.tenantId, principal, payee }), tenant_id: globex.tenantId }, 401, 'request.tenant_hint_mismatch'],
    ];
    for (const [body, status, code] of cases) {
      const response = await create(acme, body);
      expect({ status: response.statusCode, code: response.json().error?.code }).toEqual({ status, code });
    }
  });

  it('takes predicate_dsl beside predicate_ref only as the same rule, and records the reference', async () => {
    const version = (await app.inject({
      method: 'POST', url: '/harbor/policy/v1/drafts', headers: bearer(globex.adminKey), payload: { template_id: 'completion_budget_v1' },
    })).json();
    const predicateRef = `completion_budget_v1@${version.version_seq}`;
    const referenced = version.materialized_predicate as Record<string, unknown>;
    // The same rule with its keys in another order is the same rule.
    const reordered = Object.fromEntries(Object.entries(referenced).reverse());
    const agreeing = signedCreateBody({ tenantId: globex.tenantId, principal, payee, predicateRef, predicate: reordered, inlineBesideRef: true });
    const created = await create(globex, agreeing);
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ predicate_ref: predicateRef, predicate_dsl: referenced });

    const other = { version: 1, root: { op: 'true' } };
    const conflicting = await create(globex, signedCreateBody({ tenantId: globex.tenantId, principal, payee, predicateRef, predicate: other, inlineBesideRef: true }));
    expect(conflicting.statusCode).toBe(400);
    expect(conflicting.json().error).toMatchObject({ code: 'intent.predicate_conflict', details: { predicate_ref: predicateRef } });

    const dangling = await create(globex, signedCreateBody({ tenantId: globex.tenantId, principal, payee, predicateRef: 'completion_budget_v1@99', predicate: referenced, inlineBesideRef: true }));
    expect(dangling.json().error.code).toBe('intent.predicate_missing');
  });

  it('refuses a duplicate intent id with 409', async () => {
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    expect((await create(acme, body)).statusCode).toBe(201);
    const again = await create(acme, body);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('intent.already_exists');
  });
});

describe('live tenants', () => {
  it('need the principal key registered for the principal DID', async () => {
    // Live mutations also need a recognition proof; that path has its own tests. Here the proof is absent, so
    // the answer is the proof's 401 before anything else.
    const response = await create(live, signedCreateBody({ tenantId: live.tenantId, principal, payee }));
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('recognition.required');
  });
});

describe('idempotency on create', () => {
  it('replays the stored answer for the same key and body, and refuses the key with another body', async () => {
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    const headers = { 'idempotency-key': `create-${body.intent_id}` };
    const first = await create(acme, body, headers);
    const second = await create(acme, body, headers);
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const other = await create(acme, signedCreateBody({ tenantId: acme.tenantId, principal, payee }), headers);
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe('idempotency.key_reused');
    // The same key in another tenant is another key.
    const elsewhere = await create(globex, signedCreateBody({ tenantId: globex.tenantId, principal, payee }), headers);
    expect(elsewhere.statusCode).toBe(201);
  });

  it('refuses keys outside 1–256 characters', async () => {
    const response = await create(acme, signedCreateBody({ tenantId: acme.tenantId, principal, payee }), { 'idempotency-key': 'k'.repeat(257) });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('idempotency.key_invalid');
  });

  it('binds the key to the body of its first execution, even a failed one: that body runs again, another is refused', async () => {
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    const headers = { 'idempotency-key': `retry-${body.intent_id}` };
    // The amount is not what the principal signed: refused by the command, which ran.
    const tampered = { ...body, amount_cents: 1 };
    const failed = await create(acme, tampered, headers);
    expect([failed.statusCode, failed.json().error.code]).toEqual([400, 'signing.signature_invalid']);
    // A failure is not stored: the same body runs again (and fails again, not replayed).
    const again = await create(acme, tampered, headers);
    expect([again.statusCode, again.json().error.code, again.headers['idempotent-replayed']]).toEqual([400, 'signing.signature_invalid', undefined]);
    // Another body under the key is another request: refused, and nothing is created.
    const corrected = await create(acme, body, headers);
    expect([corrected.statusCode, corrected.json().error.code]).toEqual([409, 'idempotency.key_reused']);
    expect((await app.inject({ method: 'GET', url: `/harbor/intents/${body.intent_id}`, headers: bearer(acme.adminKey) })).statusCode).toBe(404);
    // Under a new key it is created.
    expect((await create(acme, body, { 'idempotency-key': `corrected-${body.intent_id}` })).statusCode).toBe(201);
  });

  it('binds nothing when the request never runs: a body refused at the boundary may be corrected under its key', async () => {
    const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee });
    const headers = { 'idempotency-key': `boundary-${body.intent_id}` };
    const refused = await app.inject({ method: 'POST', url: '/harbor/intents', headers: { ...bearer(acme.adminKey), ...headers, 'content-type': 'application/json' }, payload: '{"intent_id": ' });
    expect(refused.statusCode).toBe(400);
    expect((await create(acme, body, headers)).statusCode).toBe(201);
  });
});

describe('reads', () => {
  it('lists newest first with a state filter, and hides other tenants\' intents', async () => {
    const list = (await app.inject({ url: '/harbor/intents?limit=2&state=open', headers: bearer(acme.adminKey) })).json();
    expect(list.data).toHaveLength(2);
    expect(list.has_more).toBe(true);
    const mine = list.data[0].intent_id;
    const theirs = await app.inject({ url: `/harbor/intents/${mine}`, headers: bearer(globex.adminKey) });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error.code).toBe('intent.not_found');
    const theirList = (await app.inject({ url: '/harbor/intents', headers: bearer(globex.adminKey) })).json();
    expect(theirList.data.every((intent: { tenant_id: string }) => intent.tenant_id === globex.tenantId)).toBe(true);
  });
});
