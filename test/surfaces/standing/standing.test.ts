// Standing over HTTP on a real Postgres: three operators with released, refunded and expired intents (confirm and
// the deadline sweeper); every metric of every receipt recomputed here from the ledger rows and the intent rows;
// the score against the formula; signatures checked with @noble/ed25519 against the published keys and by
// `svc receipt verify`; the portfolio
// snapshot bound to the ledger tip and moving with it; 404 for an unknown operator and for another tenant's
// operator; another tenant's own view; 400 for an unknown score_version; roles; rebuild agreeing with the
// incremental aggregates and repairing a damaged row through the real CLI.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as noble from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/infra/database.ts';
import { standingReceiptCacheTtlMs } from '../../../src/limits.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../../src/rails/x402/wire.ts';
import { runMaintenance } from '../../../src/services/maintenance.ts';
import { rebuildStanding } from '../../../src/services/standing-service.ts';
import { verifyStandingArtifact } from '../../../src/signing/standing-artifacts.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody, type Party } from '../../helpers/intents.ts';
import { runCli } from '../../helpers/server-process.ts';

noble.hashes.sha512 = sha512;

let database: TestDatabase;
let db: Database;
let owner: pg.Pool;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const principal = party('did:principal:alice');
const operatorA = party('did:payee:alpha');
const operatorB = party('did:payee:beta');
// A DID with characters a path must encode.
const operatorC = party('did:web:ops.example:team/c#1');
const material = ['signing_algorithm', 'message_digest_hex', 'signing_public_key_hex', 'signature_hex'];

beforeAll(async () => {
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 4 });
  owner = new pg.Pool({ ...database.connection, max: 1 });
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await owner?.end();
  await database?.drop();
});

// ---- Driving intents through the engine's routes ----

const post = (tenant: TestTenant, url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, payload });

async function createFunded(tenant: TestTenant, payee: Party, amountCents: number, deadline?: string): Promise<string> {
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, amountCents, ...(deadline ? { deadline } : {}) });
  const created = await post(tenant, '/harbor/intents', body);
  expect(created.statusCode, created.body).toBe(201);
  const intentId = body.intent_id as string;
  const challenge = await post(tenant, `/harbor/intents/${intentId}/fund`, {});
  expect(challenge.statusCode).toBe(402);
  const paymentSignature = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
  const funded = await post(tenant, `/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': paymentSignature });
  expect(funded.statusCode, funded.body).toBe(200);
  return intentId;
}

/** Evidence that passes (released) or fails (refunded) the default rule, then confirm. */
async function settleWithEvidence(tenant: TestTenant, payee: Party, amountCents: number, passes: boolean): Promise<string> {
  const intentId = await createFunded(tenant, payee, amountCents);
  const payload = { status: passes ? 'completed' : 'failed' };
  const evidence = await post(tenant, `/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload }));
  expect(evidence.statusCode, evidence.body).toBeLessThan(300);
  const confirmed = await post(tenant, `/harbor/intents/${intentId}/settlement/confirm`, {});
  expect(confirmed.json()).toMatchObject({ state: passes ? 'released' : 'refunded' });
  return intentId;
}

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- Recomputing from the ledger and the intents ----

const bucketLowerBounds = [0, 1, 5, 15, 60, 300, 900, 3600, 14400, 86400, 259200, 604800, 2592000];

interface Settled {
  operator: string;
  outcome: 'released' | 'refunded' | 'expired';
  amount: bigint;
  currency: string;
  seconds: number;
  day: string;
  fundedAt: string;
  settledAt: string;
}

/** Every terminal ledger transaction of the tenant (from the ledger's own event route), joined to its intent row. */
async function settledHistory(tenant: TestTenant): Promise<Settled[]> {
  const events: Array<Record<string, any>> = [];
  for (let after = 0; ;) {
    const page = (await app.inject({ url: `/harbor/ledger/v1/events?after_seq=${after}&limit=256`, headers: bearer(tenant.adminKey) })).json();
    events.push(...page.events);
    if (page.next_after_seq === null) break;
    after = page.next_after_seq;
  }
  const terminal = events.filter((event) => event.event_kind !== 'fund' && event.side === 'debit');
  const { rows } = await owner.query(
    `SELECT intent_id::text, payee_did, principal_did, predicate_passed, extract(epoch FROM settled_at - funded_at)::text AS seconds,
       (settled_at AT TIME ZONE 'UTC')::date::text AS day,
       to_char(funded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS funded_at,
       to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS settled_at
     FROM intents WHERE tenant_id = $1`,
    [tenant.tenantId],
  );
  const intents = new Map(rows.map((row) => [row.intent_id, row]));
  return terminal.map((event) => {
    const intent = intents.get(event.intent_id)!;
    // The ledger names the counterparty: a release pays the operator's payable, a refund the principal's refund.
    expect(event.account).toBe(event.event_kind === 'release' ? `payee:${intent.payee_did}:payable` : `payer:${intent.principal_did}:refund`);
    const outcome = event.event_kind === 'release' ? 'released' : intent.predicate_passed === null ? 'expired' : 'refunded';
    return {
      operator: intent.payee_did, outcome, amount: BigInt(event.amount_cents), currency: event.currency,
      seconds: Number(intent.seconds), day: intent.day, fundedAt: intent.funded_at, settledAt: intent.settled_at,
    };
  });
}

const dayBefore = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);

function expectedWindow(items: Settled[], fromDay: string | null) {
  const count = (outcome: string) => items.filter((item) => item.outcome === outcome).length;
  const released = count('released');
  const refunded = count('refunded');
  const sorted = items.map((item) => item.seconds).sort((left, right) => left - right);
  const median = sorted[Math.ceil(sorted.length / 2) - 1];
  const bucket = median === undefined ? -1 : bucketLowerBounds.findLastIndex((bound) => bound <= median);
  const currencies = [...new Set(items.map((item) => item.currency))].sort();
  const sum = (currency: string, outcome: string) =>
    items.filter((item) => item.currency === currency && item.outcome === outcome).reduce((total, item) => total + item.amount, 0n).toString();
  return {
    from_day: fromDay,
    released_count: released,
    refunded_count: refunded,
    expired_count: count('expired'),
    disputed_count: 0,
    predicate_evaluated_count: released + refunded,
    predicate_passed_count: released,
    predicate_pass_rate_bps: released + refunded === 0 ? null : Math.floor((released * 10_000) / (released + refunded)),
    funding_to_terminal_median_seconds: median === undefined ? null : { at_least: bucketLowerBounds[bucket], below: bucketLowerBounds[bucket + 1] ?? null },
    amounts: currencies.map((currency) => ({
      currency, released_cents: sum(currency, 'released'), refunded_cents: sum(currency, 'refunded'), expired_cents: sum(currency, 'expired'),
    })),
  };
}

function expectedMetrics(history: Settled[], operator: string, asOfDay: string) {
  const items = history.filter((item) => item.operator === operator);
  const from30 = dayBefore(asOfDay, 29);
  const from7 = dayBefore(asOfDay, 6);
  return {
    first_activity_at: items.map((item) => item.fundedAt).sort()[0],
    last_activity_at: items.map((item) => item.settledAt).sort().at(-1),
    as_of_day: asOfDay,
    all_time: expectedWindow(items, null),
    last_30_days: expectedWindow(items.filter((item) => item.day >= from30), from30),
    last_7_days: expectedWindow(items.filter((item) => item.day >= from7), from7),
  };
}

/** The documented model 1: floor(1000 × (R + 1) / (R + F + 2E + 2)). */
const expectedScore = (metrics: ReturnType<typeof expectedMetrics>) => {
  const { released_count: r, refunded_count: f, expired_count: e } = metrics.all_time;
  return Math.floor((1000 * (r + 1)) / (r + f + 2 * e + 2));
};

// ---- Reading and checking signed answers ----

const reputation = (tenant: TestTenant, did: string, query = '', key = tenant.adminKey) =>
  app.inject({ url: `/reputation/${encodeURIComponent(did)}${query}`, headers: bearer(key) });
const portfolio = (tenant: TestTenant, key = tenant.adminKey) => app.inject({ url: '/signal/v1/portfolio/signed-export', headers: bearer(key) });

async function publishedKeys(tenant: TestTenant): Promise<string[]> {
  const authority = (await app.inject({ url: '/harbor/ledger/v1/authority', headers: bearer(tenant.adminKey) })).json();
  return authority.verification_keys.map((key: { public_key_hex: string }) => key.public_key_hex);
}

/** Independently of the service's code: the signed bytes are the artifact's JSON without the material fields, in the
 * order the service sends them; SHA-256 of them is the digest; the signature is Ed25519 over the digest. */
async function expectSignedByService(artifact: Record<string, unknown>, tenant: TestTenant) {
  const signed = Object.fromEntries(Object.entries(artifact).filter(([name]) => !material.includes(name)));
  const digest = createHash('sha256').update(JSON.stringify(signed)).digest();
  expect(artifact.signing_algorithm).toBe('ed25519-sha256-json-v1');
  expect(artifact.message_digest_hex).toBe(digest.toString('hex'));
  expect(await publishedKeys(tenant)).toContain(artifact.signing_public_key_hex);
  const signature = Buffer.from(artifact.signature_hex as string, 'hex');
  expect(noble.verify(signature, digest, Buffer.from(artifact.signing_public_key_hex as string, 'hex'))).toBe(true);
  // And the offline verifier `svc receipt verify` dispatches to.
  expect(verifyStandingArtifact(artifact, await publishedKeys(tenant)).messageDigestHex).toBe(digest.toString('hex'));
}

async function expectReceiptMatches(tenant: TestTenant, operator: string, history: Settled[]) {
  const response = await reputation(tenant, operator);
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['cache-control']).toBe('private, no-store');
  const answer = response.json();
  const receipt = answer.receipt;
  const metrics = expectedMetrics(history, operator, receipt.metrics.as_of_day);
  expect(receipt.metrics.as_of_day).toBe(receipt.issued_at.slice(0, 10));
  expect(receipt).toMatchObject({
    schema_version: 1, receipt_version: '1', kind: 'svc.signal.operator_receipt', tenant_id: tenant.tenantId, operator_did: operator,
    score_version: '1', scoring_model: 'svc.standing.smoothed_release_ratio_v1',
  });
  expect(receipt.metrics).toEqual(metrics);
  expect(receipt.score).toBe(expectedScore(metrics));
  expect(answer).toEqual({ schema_version: 1, updated_at: metrics.last_activity_at, receipt });
  await expectSignedByService(receipt, tenant);
  return receipt;
}

async function tip(tenant: TestTenant) {
  return (await app.inject({ url: '/harbor/ledger/v1/tip', headers: bearer(tenant.adminKey) })).json();
}

const expectError = (response: LightMyRequestResponse, status: number, code: string) => {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.json().error.code).toBe(code);
};

// ---- The histories ----

describe('standing', () => {
  beforeAll(async () => {
    // Expiring intents first, so their deadlines pass while the others settle.
    const expireBySweeper = await createFunded(acme, operatorB, 400, inSeconds(2));
    const expireByConfirm = await createFunded(acme, operatorC, 900, inSeconds(2));
    await settleWithEvidence(acme, operatorA, 300, true);
    await settleWithEvidence(acme, operatorA, 500, true);
    await settleWithEvidence(acme, operatorA, 700, false);
    await settleWithEvidence(acme, operatorB, 250, true);
    await settleWithEvidence(acme, operatorC, 100, false);
    await settleWithEvidence(globex, operatorA, 1000, true);
    await sleep(2_600);
    expect((await post(acme, `/harbor/intents/${expireByConfirm}/settlement/confirm`, {})).json()).toMatchObject({ state: 'refunded', settlement: { reason: 'deadline_passed' } });
    expect((await runMaintenance(db, app.engineEffects)).refunded).toBeGreaterThanOrEqual(1);
    expect((await app.inject({ url: `/harbor/intents/${expireBySweeper}`, headers: bearer(acme.adminKey) })).json().state).toBe('refunded');
  }, 60_000);

  it('each receipt equals the metrics recomputed from the ledger, the score its formula, and verifies', async () => {
    const history = await settledHistory(acme);
    expect(history.map((item) => item.outcome).sort()).toEqual(['expired', 'expired', 'refunded', 'refunded', 'released', 'released', 'released']);
    const a = await expectReceiptMatches(acme, operatorA.did, history);
    const b = await expectReceiptMatches(acme, operatorB.did, history);
    const c = await expectReceiptMatches(acme, operatorC.did, history);
    // The three histories differ as driven: A 2 released + 1 refunded, B 1 released + 1 expired, C 1 refunded + 1 expired.
    expect([a.metrics.all_time.released_count, a.metrics.all_time.refunded_count, a.metrics.all_time.expired_count]).toEqual([2, 1, 0]);
    expect([b.metrics.all_time.released_count, b.metrics.all_time.refunded_count, b.metrics.all_time.expired_count]).toEqual([1, 0, 1]);
    expect([c.metrics.all_time.released_count, c.metrics.all_time.refunded_count, c.metrics.all_time.expired_count]).toEqual([0, 1, 1]);
    expect([a.score, b.score, c.score]).toEqual([600, 400, 200]);
    expect(a.metrics.all_time).toMatchObject({ predicate_pass_rate_bps: 6666, amounts: [{ currency: 'usd', released_cents: '800', refunded_cents: '700', expired_cents: '0' }] });
    expect(c.metrics.all_time.predicate_pass_rate_bps).toBe(0);
    // B's median is its lower middle value (of two), the release within a second; the expiry took about 2-3 s.
    expect(b.metrics.all_time.funding_to_terminal_median_seconds).toEqual({ at_least: 0, below: 1 });
    expect(c.metrics.all_time.funding_to_terminal_median_seconds).toEqual({ at_least: 0, below: 1 });
  });

  it('`svc receipt verify` checks a saved receipt and a saved snapshot against the published keys', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'standing-'));
    try {
      const jwks = path.join(directory, 'jwks.json');
      fs.writeFileSync(jwks, (await app.inject({ url: '/.well-known/jwks.json' })).body);
      const answer = (await reputation(acme, operatorC.did)).json();
      const files = { receipt: answer, snapshot: (await portfolio(acme)).json(), tampered: { ...answer, receipt: { ...answer.receipt, score: 999 } } };
      for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(directory, `${name}.json`), JSON.stringify(content));
      for (const name of ['receipt', 'snapshot']) {
        const result = await runCli(['receipt', 'verify', path.join(directory, `${name}.json`), '--jwks', jwks, '--json'], {});
        expect(result.code, result.stdout + result.stderr).toBe(0);
        expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, tenant_id: acme.tenantId, keys_pinned: true });
      }
      const tampered = await runCli(['receipt', 'verify', path.join(directory, 'tampered.json'), '--jwks', jwks, '--json'], {});
      expect(tampered.code).toBe(1);
      expect(JSON.parse(tampered.stdout).problems.join(' ')).toContain('artifact.signature_invalid');
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('a tampered receipt does not verify', async () => {
    const receipt = (await reputation(acme, operatorA.did)).json().receipt;
    expect(() => verifyStandingArtifact({ ...receipt, score: receipt.score + 1 })).toThrow(expect.objectContaining({ code: 'artifact.signature_invalid' }));
    expect(() => verifyStandingArtifact(receipt, ['00'.repeat(32)])).toThrow(expect.objectContaining({ code: 'artifact.key_untrusted' }));
    expect(() => verifyStandingArtifact({ ...receipt, extra: 1 })).toThrow(expect.objectContaining({ code: 'artifact.malformed' }));
  });

  it('the portfolio snapshot carries every operator as its receipt does, bound to the ledger tip; it moves with the ledger', async () => {
    const first = (await portfolio(acme)).json();
    await expectSignedByService(first, acme);
    const ledgerTip = await tip(acme);
    expect(first).toMatchObject({
      schema_version: 1, artifact_version: '1', kind: 'svc.signal.portfolio_snapshot', tenant_id: acme.tenantId, score_model_version: '1',
      scoring_model: 'svc.standing.smoothed_release_ratio_v1', checkpoint_last_ledger_seq: ledgerTip.ledger_seq, checkpoint_row_hash_hex: ledgerTip.row_hash_hex,
    });
    let history = await settledHistory(acme);
    const dids = [operatorA.did, operatorB.did, operatorC.did].sort();
    expect(first.operators.map((operator: { operator_did: string }) => operator.operator_did)).toEqual(dids);
    for (const operator of first.operators) {
      const metrics = expectedMetrics(history, operator.operator_did, first.issued_at.slice(0, 10));
      expect(operator).toEqual({ operator_did: operator.operator_did, metrics, score: expectedScore(metrics) });
    }

    await settleWithEvidence(acme, operatorB, 4200, true);
    const second = (await portfolio(acme)).json();
    await expectSignedByService(second, acme);
    expect(second.checkpoint_last_ledger_seq).toBe((await tip(acme)).ledger_seq);
    // A fund and a release: two rows each.
    expect(second.checkpoint_last_ledger_seq).toBe(first.checkpoint_last_ledger_seq + 4);
    history = await settledHistory(acme);
    const beta = second.operators.find((operator: { operator_did: string }) => operator.operator_did === operatorB.did);
    expect(beta.metrics).toEqual(expectedMetrics(history, operatorB.did, second.issued_at.slice(0, 10)));
    expect(beta.metrics.all_time.released_count).toBe(2);
    expect(beta.metrics.all_time.amounts[0].released_cents).toBe('4450');
    expect(beta.score).toBe(500);
    await expectReceiptMatches(acme, operatorB.did, history);
  });

  it('another tenant sees only its own history of the same operator, and nothing of operators it never paid', async () => {
    const history = await settledHistory(globex);
    const own = await expectReceiptMatches(globex, operatorA.did, history);
    expect(own.metrics.all_time).toMatchObject({ released_count: 1, refunded_count: 0, amounts: [{ currency: 'usd', released_cents: '1000' }] });
    expectError(await reputation(globex, operatorB.did), 404, 'standing.operator_unknown');
    const snapshot = (await portfolio(globex)).json();
    expect(snapshot.tenant_id).toBe(globex.tenantId);
    expect(snapshot.operators.map((operator: { operator_did: string }) => operator.operator_did)).toEqual([operatorA.did]);
    expect(JSON.stringify(snapshot)).not.toContain(operatorB.did);
  });

  it('refuses an unknown operator (404), an unknown score_version (400), and roles without standing access (403)', async () => {
    expectError(await reputation(acme, 'did:payee:never-paid'), 404, 'standing.operator_unknown');
    expectError(await reputation(acme, operatorA.did, '?score_version=2'), 400, 'standing.score_version_unsupported');
    expectError(await reputation(acme, operatorA.did, '?score_version='), 400, 'standing.score_version_unsupported');
    expect((await reputation(acme, operatorA.did, '?score_version=1')).statusCode).toBe(200);
    // The longest DID an intent may name, every character percent-encoded, still reaches the route.
    const longest = `did:x:${'a'.repeat(250)}`;
    const encodedWhole = [...longest].map((character) => `%${character.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    expectError(await app.inject({ url: `/reputation/${encodedWhole}`, headers: bearer(acme.adminKey) }), 404, 'standing.operator_unknown');
    expectError(await reputation(acme, `${longest}a`), 400, 'request.invalid');
    for (const role of ['agent', 'operator'] as const) {
      const key = await acme.key(role);
      expectError(await reputation(acme, operatorA.did, '', key), 403, 'auth.role_insufficient');
      expectError(await portfolio(acme, key), 403, 'auth.role_insufficient');
    }
    const auditor = await acme.key('auditor');
    expect((await reputation(acme, operatorA.did, '', auditor)).statusCode).toBe(200);
    expect((await portfolio(acme, auditor)).statusCode).toBe(200);
  });
});

describe('windows', () => {
  /** The tenant's settled intents straight from the intents table (these were seeded without ledger rows). */
  async function historyFromIntents(tenantId: string): Promise<Settled[]> {
    const { rows } = await owner.query(
      `SELECT payee_did, state, predicate_passed, amount_cents::text, currency, extract(epoch FROM settled_at - funded_at)::text AS seconds,
         (settled_at AT TIME ZONE 'UTC')::date::text AS day,
         to_char(funded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS funded_at,
         to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS settled_at
       FROM intents WHERE tenant_id = $1 AND state IN ('released', 'refunded')`,
      [tenantId],
    );
    return rows.map((row) => ({
      operator: row.payee_did, outcome: row.state === 'released' ? 'released' : row.predicate_passed === null ? 'expired' : 'refunded',
      amount: BigInt(row.amount_cents), currency: row.currency, seconds: Number(row.seconds), day: row.day, fundedAt: row.funded_at, settledAt: row.settled_at,
    }));
  }

  it('counts each intent in the windows its settlement day falls in, per currency, with the median of each window', async () => {
    const initech = await createTestTenant(database.connection, 'sandbox');
    const operator = 'did:payee:old-timer';
    // [days ago settled, seconds from funding, outcome, amount, currency]
    const seeded: Array<[number, number, 'released' | 'refunded' | 'expired', number, string]> = [
      [0, 30, 'released', 100, 'usd'], [3, 7_200, 'refunded', 200, 'usd'], [10, 432_000, 'expired', 300, 'usd'], [45, 3_456_000, 'released', 400, 'eur'],
    ];
    for (const [daysAgo, seconds, outcome, amount, currency] of seeded) {
      await owner.query(
        `INSERT INTO intents (tenant_id, intent_id, state, signing_version, principal_did, principal_key_registered, payee_did, budget, currency,
           amount_cents, evidence_schema, deadline_text, deadline, predicate_dsl, settlement_rail, allowed_tools, predicate_passed, funded_at, settled_at,
           released_cents, refunded_cents)
         VALUES ($1, gen_random_uuid(), $2, 0, 'did:principal:seeded', false, $3, '{}', $4, $5, '{"type":"object"}', '2030-01-01T00:00:00Z',
           '2030-01-01T00:00:00Z', '{"version":1,"root":{"op":"true"}}', 'x402_usdc_base', ARRAY['x'], $6,
           now() - make_interval(days => $7) - make_interval(secs => $8), now() - make_interval(days => $7),
           CASE WHEN $2 = 'released' THEN $5::bigint ELSE 0 END, CASE WHEN $2 = 'released' THEN 0 ELSE $5::bigint END)`,
        [initech.tenantId, outcome === 'released' ? 'released' : 'refunded', operator, currency, amount, outcome === 'released' ? true : outcome === 'refunded' ? false : null, daysAgo, seconds],
      );
    }
    expect(await rebuildStanding(db, initech.tenantId)).toMatchObject({ operators: 1 });
    const receipt = (await reputation(initech, operator)).json().receipt;
    expect(receipt.metrics).toEqual(expectedMetrics(await historyFromIntents(initech.tenantId), operator, receipt.metrics.as_of_day));
    const { all_time: all, last_30_days: month, last_7_days: week } = receipt.metrics;
    expect([all.released_count + all.refunded_count + all.expired_count, month.released_count + month.refunded_count + month.expired_count, week.released_count + week.refunded_count + week.expired_count]).toEqual([4, 3, 2]);
    expect(all.amounts.map((amount: { currency: string }) => amount.currency)).toEqual(['eur', 'usd']);
    expect(all.funding_to_terminal_median_seconds).toEqual({ at_least: 3600, below: 14400 });
    expect(week.funding_to_terminal_median_seconds).toEqual({ at_least: 15, below: 60 });
    expect(receipt.score).toBe(Math.floor((1000 * 3) / (2 + 1 + 2 + 2)));
    await expectSignedByService(receipt, initech);
  });
});

describe('rebuild', () => {
  const aggregateRows = async (tenantId: string) => {
    const totals = await owner.query('SELECT * FROM standing_operator_totals WHERE tenant_id = $1 ORDER BY operator_did, currency', [tenantId]);
    const days = await owner.query('SELECT * FROM standing_operator_days WHERE tenant_id = $1 ORDER BY operator_did, day, currency', [tenantId]);
    return { totals: totals.rows, days: days.rows };
  };

  it('recomputes exactly what the settling transactions accumulated', async () => {
    const before = await aggregateRows(acme.tenantId);
    expect(before.totals).toHaveLength(3);
    expect(await rebuildStanding(db, acme.tenantId)).toEqual({ operators: 3, dayRows: before.days.length });
    expect(await aggregateRows(acme.tenantId)).toEqual(before);
  });

  it('a rebuild racing settlements leaves the aggregates a fresh rebuild agrees with', async () => {
    const funded = [];
    for (let index = 0; index < 6; index += 1) funded.push(await createFunded(acme, index % 2 ? operatorA : operatorB, 10 + index));
    const settle = async (intentId: string, index: number) => {
      const payee = index % 2 ? operatorA : operatorB;
      const payload = { status: index % 3 ? 'completed' : 'failed' };
      expect((await post(acme, `/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload }))).statusCode).toBeLessThan(300);
      expect((await post(acme, `/harbor/intents/${intentId}/settlement/confirm`, {})).statusCode).toBe(200);
    };
    const rebuilds = async () => {
      for (let round = 0; round < 3; round += 1) await rebuildStanding(db, acme.tenantId);
    };
    await Promise.all([...funded.map(settle), rebuilds()]);
    const raced = await aggregateRows(acme.tenantId);
    await rebuildStanding(db, acme.tenantId);
    expect(await aggregateRows(acme.tenantId)).toEqual(raced);
  });

  it('`svc standing rebuild` repairs a damaged aggregate row', async () => {
    const history = await settledHistory(acme);
    await owner.query(
      `UPDATE standing_operator_totals SET released_count = released_count + 5, duration_histogram[13] = 40 WHERE tenant_id = $1 AND operator_did = $2`,
      [acme.tenantId, operatorA.did],
    );
    const damaged = (await reputation(acme, operatorA.did)).json().receipt;
    const releasedOfA = history.filter((item) => item.operator === operatorA.did && item.outcome === 'released').length;
    expect(damaged.metrics.all_time.released_count).toBe(releasedOfA + 5);
    const env = { DATABASE_URL: database.url };
    const result = await runCli(['standing', 'rebuild', '--tenant-id', acme.tenantId, '--json'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ tenant_id: acme.tenantId, operators: 3 });
    // The CLI is another process: this one may answer the damaged receipt for up to the cache's lifetime.
    await sleep(standingReceiptCacheTtlMs + 50);
    await expectReceiptMatches(acme, operatorA.did, history);
    const unknown = await runCli(['standing', 'rebuild', '--tenant-id', 'no-such-tenant'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('tenant.not_found');
  });
});
