// The rail registry (src/rails/index.ts): a rail declared only in this file, registered through registerRail, runs a
// sandbox lifecycle over HTTP (402 with its challenge, its credential, funded, evidence, released, the ledger
// verified) and shows up wherever the service lists rails (the fund route's headers and OpenAPI, the settlement
// configuration's contract, MCP, log redaction), with no other file knowing it. Then what the registry refuses,
// and that the SDK's list of rail wires and the redaction list hold to the registry.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { Database } from '../../src/infra/database.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { createLogger, redactedPaths } from '../../src/infra/logging.ts';
import {
  paymentProblem,
  railAdapterFor,
  railCarriesOut,
  railRedactedPaths,
  registeredRails,
  registerRail,
  resolveRailName,
  type CredentialOutcome,
  type FundingContext,
  type IssuedChallenge,
  type PresentedCredential,
  type RailAdapter,
  type RailDefinition,
} from '../../src/rails/index.ts';
import { builtInRails } from '../../src/rails/built-in.ts';
import { railClientWires } from '../../src/sdk/rails.ts';
import { verifyTenantLedger } from '../../src/services/ledger-verifier.ts';
import { runRailSweep } from '../../src/services/maintenance.ts';
import { resolveTools } from '../../src/surfaces/mcp/resolved-tools.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';

// ---- A rail of this test only: vouchers. A 402 names a challenge; the credential is `<challenge id>:<code>`, and the
// code `paid` settles while any other declines. ----

const voucherRailName = 'test_voucher';
const challengeHeader = 'x-test-voucher-challenge';
const credentialHeader = 'x-test-voucher';

function readVoucher(headers: Readonly<Record<string, string | string[] | undefined>>): PresentedCredential {
  const value = headers[credentialHeader];
  if (value === undefined) return { kind: 'absent' };
  const match = typeof value === 'string' ? /^([0-9a-f]{32}):([a-z]+)$/.exec(value) : null;
  if (typeof value !== 'string' || !match) return { kind: 'malformed', reason: `${credentialHeader} must be one <challenge id>:<code>` };
  return { kind: 'credential', challengeId: match[1]!, digest: createHash('sha256').update(value).digest(), data: { code: match[2] } };
}

class VoucherAdapter implements RailAdapter {
  readonly rail = voucherRailName;
  constructor(readonly settlementRail: string) {}

  issueChallenge(context: FundingContext): IssuedChallenge {
    const challengeId = randomBytes(16).toString('hex');
    return {
      challengeId,
      stored: { intent_id: context.intentId },
      headers: { [challengeHeader]: challengeId },
      funding: { settlement_rail: this.settlementRail, status: 'created', challenge_id: challengeId },
    };
  }

  readCredential(headers: Record<string, string | string[] | undefined>): PresentedCredential {
    return readVoucher(headers);
  }

  async authorize(context: FundingContext, credential: Extract<PresentedCredential, { kind: 'credential' }>, challenge: Record<string, unknown> | undefined): Promise<CredentialOutcome> {
    if (challenge?.['intent_id'] !== context.intentId) {
      return { status: 'rejected', problem: paymentProblem('invalid-challenge', 'not a voucher challenge of this intent'), funding: { settlement_rail: this.settlementRail, status: 'voucher_refused' } };
    }
    const { code } = credential.data as { code: string };
    if (code !== 'paid') return { status: 'declined', reason: 'voucher_unpaid', funding: { settlement_rail: this.settlementRail, status: 'voucher_unpaid' } };
    const reference = `voucher_${credential.challengeId}`;
    return { status: 'succeeded', reference, funding: { settlement_rail: this.settlementRail, status: 'voucher_accepted', challenge_id: credential.challengeId, payment_reference: reference } };
  }

  async poll(context: FundingContext, pending: { reference: string }): Promise<CredentialOutcome> {
    return { status: 'succeeded', reference: pending.reference, funding: { settlement_rail: this.settlementRail, status: 'voucher_accepted' } };
  }
}

const voucherRail: RailDefinition = {
  name: voucherRailName,
  aliases: ['test_voucher_alias'],
  currencies: ['usd'],
  consoleLabel: 'Test vouchers',
  counterpart: 'voucher office',
  challengeHeaders: [{ name: challengeHeader, description: 'The voucher challenge id.' }],
  credentialHeaders: [{ name: credentialHeader, description: 'A voucher.', toolArgument: 'test_voucher', toolDescription: 'A voucher, sent as x-test-voucher.' }],
  receiptHeaders: [],
  readCredential: readVoucher,
  operations: { sandbox: ['charge'], live: ['charge'] },
  fields: [
    { name: 'test_voucher_office', kind: 'text', lengthMax: 32, description: 'The voucher office.', console: { label: 'Voucher office' } },
    { name: 'test_voucher_key', kind: 'secret', description: 'The voucher office key.' },
  ],
  sandboxAdapter: (settlementRail) => new VoucherAdapter(settlementRail),
};

// ---- The lifecycle over HTTP ----

let database: TestDatabase;
let db: Database;
let app: FastifyInstance;
let tenant: TestTenant;
let unregister: () => void;
const principal = party('did:principal:registry');
const payee = party('did:payee:registry');
/** The built-in rails, as registered before this test adds its own. */
const builtIn = registeredRails();

beforeAll(async () => {
  // Registered before the app is built, as a rail must be: the routes read the registry when they are registered.
  unregister = registerRail(voucherRail);
  database = await createTestDatabase();
  db = new Database({ ...database.connection, max: 2 });
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  unregister?.();
  await app?.close();
  await db?.close();
  await database?.drop();
});

const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, payload });

async function createVoucherIntent(settlementRail = voucherRailName): Promise<string> {
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, settlementRail, amountCents: 700 });
  const created = await post('/harbor/intents', body);
  expect(created.statusCode, created.body).toBe(201);
  return body.intent_id as string;
}

const fund = (intentId: string, headers: Record<string, string> = {}) => post(`/harbor/intents/${intentId}/fund`, {}, headers);
const challengeOf = (answer: LightMyRequestResponse) => answer.headers[challengeHeader] as string;

describe('a rail declared only in this test', () => {
  it('runs a sandbox lifecycle: 402 with its challenge, its credential, funded, evidence, released, the ledger verified', async () => {
    const intentId = await createVoucherIntent();
    const challenged = await fund(intentId);
    expect(challenged.statusCode, challenged.body).toBe(402);
    expect(challengeOf(challenged)).toMatch(/^[0-9a-f]{32}$/);
    expect(challenged.json()).toMatchObject({ state: 'open', funded: false, funding: { settlement_rail: voucherRailName, status: 'created', challenge_id: challengeOf(challenged) } });

    const funded = await fund(intentId, { [credentialHeader]: `${challengeOf(challenged)}:paid` });
    expect(funded.statusCode, funded.body).toBe(200);
    expect(funded.json()).toMatchObject({ state: 'funded', funded: true, capability_token: expect.any(String), funding: { status: 'voucher_accepted' } });

    const recorded = await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed' } }));
    expect(recorded.json(), recorded.body).toMatchObject({ state: 'evidence_recorded', predicate_passed: true });
    const settled = await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
    expect(settled.json(), settled.body).toMatchObject({ state: 'released', settlement: { action: 'release' } });

    const report = await verifyTenantLedger(db, tenant.tenantId);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.balances[`rail:${voucherRailName}:funding`]).toBe(-700n);
  });

  it('declines through its adapter with a fresh challenge, and answers to its alias', async () => {
    const intentId = await createVoucherIntent('test_voucher_alias');
    const challenged = await fund(intentId);
    expect(challenged.json().funding.settlement_rail).toBe('test_voucher_alias');
    const declined = await fund(intentId, { [credentialHeader]: `${challengeOf(challenged)}:unpaid` });
    expect(declined.statusCode).toBe(402);
    expect(declined.json()).toMatchObject({ state: 'open', funding: { status: 'voucher_unpaid' } });
    expect(challengeOf(declined)).not.toBe(challengeOf(challenged));
    expect((await fund(intentId, { [credentialHeader]: `${challengeOf(declined)}:paid` })).statusCode).toBe(200);
  });

  it('is listed wherever the service lists rails: the fund route and its OpenAPI, MCP, log redaction', async () => {
    const document = (await app.inject({ url: '/openapi.json' })).json();
    const operation = document.paths['/harbor/intents/{intent_id}/fund'].post;
    expect(operation.parameters.map((parameter: { name: string }) => parameter.name)).toContain(credentialHeader);
    expect(Object.keys(operation.responses['402'].headers)).toContain(challengeHeader);
    const fundTool = resolveTools(app.routeContracts).find((tool) => tool.name === 'svc_fund_intent')!;
    expect(fundTool.headerArguments['test_voucher']).toEqual({ header: credentialHeader, description: 'A voucher, sent as x-test-voucher.' });
    expect(railRedactedPaths()).toEqual(expect.arrayContaining([`req.headers["${credentialHeader}"]`, '*.test_voucher_key']));
  });

  it('is asked by the sweeper only for what it declares: a payout it does not carry out is the operator\'s', async () => {
    const intentId = await createVoucherIntent();
    const challenged = await fund(intentId);
    expect((await fund(intentId, { [credentialHeader]: `${challengeOf(challenged)}:paid` })).statusCode).toBe(200);
    const instructionId = randomUUID();
    await db.system((tx) => tx.query(
      `INSERT INTO rail_instructions (tenant_id, instruction_id, intent_id, kind, rail, amount_cents, currency, funding_reference)
       VALUES ($1, $2, $3, 'payout', $4, 700, 'usd', 'voucher_reference')`,
      [tenant.tenantId, instructionId, intentId, voucherRailName],
    ));
    const report = await runRailSweep(db, { secretBox: undefined, callTimeoutMs: 1_000 }, ephemeralKeyring());
    expect(report.instructions.failed).toBe(1);
    const stored = await db.system(async (tx) => (await tx.query('SELECT status, last_error FROM rail_instructions WHERE instruction_id = $1', [instructionId])).rows[0]);
    expect(stored).toMatchObject({ status: 'failed', last_error: expect.stringMatching(/test_voucher rail does not carry out a payout/) });
  });

  it('is configured through the settlement configuration, its fields in the contract, its secret write-only', async () => {
    const put = (payload: object) => app.inject({ method: 'PUT', url: '/v1/admin/settlement/config', headers: bearer(tenant.adminKey), payload });
    const refused = await put({ rails: [voucherRailName], test_voucher_office: 'x'.repeat(33) });
    expect(refused.json().error.code).toBe('request.invalid');
    // Storing a secret needs the deployment's key, which this app has not: the field is the rail's, refused as any.
    expect((await put({ rails: [voucherRailName], test_voucher_key: 'k' })).json().error).toMatchObject({ code: 'settlement_config.secrets_key_missing', details: { fields: ['test_voucher_key'] } });
    const stored = await put({ rails: [voucherRailName, 'x402_usdc_base'], x402_address: `0x${'ab'.repeat(20)}`, test_voucher_office: 'Lisbon' });
    expect(stored.statusCode, stored.body).toBe(200);
    expect(stored.json()).toMatchObject({ rails: [voucherRailName, 'x402_usdc_base'], test_voucher_office: 'Lisbon', test_voucher_key_set: false });
    const read = await app.inject({ url: '/v1/admin/settlement/config', headers: bearer(tenant.adminKey) });
    expect(read.json()).toEqual(stored.json());
    // The configuration now lists the rail, so its intents still fund; a rail it leaves out does not.
    const intentId = await createVoucherIntent();
    expect((await fund(intentId)).statusCode).toBe(402);
    expect((await put({ rails: ['x402_usdc_base'], x402_address: `0x${'ab'.repeat(20)}` })).statusCode).toBe(200);
    expect((await fund(intentId)).json().error).toMatchObject({ code: 'funding.rail_not_configured', details: { missing_fields: ['rails'] } });
  });
});

describe('the registry', () => {
  it('refuses a definition that clashes with a registered rail or breaks the declaration', () => {
    const clashes: [Partial<RailDefinition>, RegExp][] = [
      [{ name: 'x402_usdc_base' }, /already names/],
      [{ name: 'other_rail', aliases: ['stripe_mpp'] }, /already names/],
      [{ name: 'Other Rail' }, /not a rail name/],
      [{ name: 'other_rail', credentialHeaders: [{ ...voucherRail.credentialHeaders[0]!, name: 'payment-signature', toolArgument: 'other' }] }, /credential header payment-signature/],
      [{ name: 'other_rail', credentialHeaders: [{ ...voucherRail.credentialHeaders[0]!, name: 'X-Other' }] }, /lowercase/],
      [{ name: 'other_rail', credentialHeaders: [], fields: [{ name: 'x402_address', kind: 'text', lengthMax: 8, description: '' }] }, /field x402_address is taken/],
      [{ name: 'other_rail', credentialHeaders: [], fields: [{ name: 'object', kind: 'flag', description: '' }] }, /field object is taken/],
      [{ name: 'other_rail', credentialHeaders: [], operations: { sandbox: ['charge'], live: ['charge', 'refund'] } }, /no live adapter/],
      [{ name: 'other_rail', credentialHeaders: [], currencies: ['USD'] }, /currencies/],
      [{ name: 'other_rail', credentialHeaders: [], fields: [{ name: 'other_office', kind: 'text', description: '' }] }, /declares no lengthMax/],
    ];
    for (const [change, reason] of clashes) {
      expect(() => registerRail({ ...voucherRail, aliases: [], fields: [], ...change }), JSON.stringify(change)).toThrow(reason);
    }
    expect(resolveRailName('other_rail')).toBeUndefined();
  });

  it('declares what each built-in rail carries out: charge in sandbox; charge, payout and refund in live; x402 holds too', () => {
    for (const { name } of builtIn) {
      expect(railCarriesOut(name, 'sandbox', 'charge')).toBe(true);
      expect(railCarriesOut(name, 'sandbox', 'payout')).toBe(false);
      for (const operation of ['charge', 'payout', 'refund'] as const) expect(railCarriesOut(name, 'live', operation)).toBe(true);
      // x402 auth-capture holds at funding and captures or voids at settlement; MPP charges at funding.
      expect(railCarriesOut(name, 'live', 'capture')).toBe(name === 'x402_usdc_base');
    }
    expect(railCarriesOut(voucherRailName, 'live', 'payout')).toBe(false);
  });

  it('hides from the logs what it hid before the rails declared it, and each rail\'s secrets', () => {
    const builtInPaths = builtIn.flatMap((rail) => [
      ...rail.credentialHeaders.map((header) => `req.headers["${header.name}"]`),
      ...rail.fields.filter((field) => field.kind === 'secret').map((field) => `*.${field.name}`),
    ]);
    expect(builtInPaths).toEqual(['req.headers["payment-signature"]', '*.x402_facilitator_api_key', '*.x402_receiver_authorizer_key', 'req.headers["x-svc-payment-authorization"]', '*.mpp_processor_secret_key']);
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => { lines.push(String(chunk)); done(); } });
    const logger = createLogger('info', destination, railRedactedPaths());
    logger.info({ body: { x402_facilitator_api_key: 'fac-secret', mpp_processor_secret_key: 'proc-secret', test_voucher_key: 'voucher-secret' } }, 'configured');
    expect(lines.join('')).toContain('[redacted]');
    for (const secret of ['fac-secret', 'proc-secret', 'voucher-secret']) expect(lines.join('')).not.toContain(secret);
    // Infrastructure knows no rail: without the rails' paths the logger hides only its own.
    expect(redactedPaths.some((path) => path.includes('x402') || path.includes('payment'))).toBe(false);
  });

  it('loads each built-in rail from its one line, which gives the SDK the same rail\'s wire', () => {
    // The registry loads `<folder>/index.ts` of each line in src/rails/built-in.ts; the SDK reads the line's wire.
    expect(railClientWires.map((wire) => wire.rails)).toEqual(builtIn.map((rail) => [rail.name, ...rail.aliases]));
    // A rail's folder holds a declaration and a wire; none is left without its line.
    const railsDir = new URL('../../src/rails/', import.meta.url);
    const folders = fs.readdirSync(railsDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    for (const folder of folders) {
      expect(fs.existsSync(new URL(`${folder}/index.ts`, railsDir)) && fs.existsSync(new URL(`${folder}/wire.ts`, railsDir))).toBe(true);
    }
    expect(builtInRails.map((rail) => rail.folder).sort()).toEqual(folders.sort());
  });

  it('forgets a rail once it is unregistered: its intents answer 422 funding.rail_unsupported', async () => {
    const again = registerRail({ ...voucherRail, name: 'test_voucher_brief', aliases: [], credentialHeaders: [], fields: [] });
    expect(resolveRailName('test_voucher_brief')).toBe('test_voucher_brief');
    again();
    expect(resolveRailName('test_voucher_brief')).toBeUndefined();
    await expect(railAdapterFor('test_voucher_brief', { environment: 'sandbox', config: undefined, currency: 'usd' })).rejects.toMatchObject({ code: 'funding.rail_unsupported' });
  });
});
