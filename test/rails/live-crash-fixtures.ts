// The rig of the live settlement crash tests: a real server process (test/helpers/server-process.ts) that kills
// itself (SIGKILL) at a crash point (src/engine/crash-points.ts) and is started again on the same database, a live
// tenant with the agent's and the principal's registered keys, the lifecycle's requests with their recognition
// proofs, and what the tests read after a restart: the intent's rail instructions, a wait for the sweeper, and
// `svc ledger verify`. Each rail's test funds through its own local protocol server. Used by the settlement crash
// tests (live-x402-escrow-crash, live-mpp-settle-crash) and the x402 funding crash test (live-x402-crash).
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { CrashPoint } from '../../src/engine/crash-points.ts';
import { Database } from '../../src/infra/database.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, type HttpAnswer } from '../helpers/http-client.ts';
import { party, signedCreateBody, signedEvidenceBody, type CreateOptions, type Party } from '../helpers/intents.ts';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

/** A rail instruction as the crash tests compare it. */
export interface InstructionRow {
  readonly kind: 'payout' | 'refund';
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly amount: number;
  readonly reference: string | null;
  /** A sweeper holds it: claimed and its outcome not recorded. */
  readonly claimed: boolean;
}

export interface CrashRig {
  readonly tenant: TestTenant;
  /** The test's own connection to the database the server uses (rows are read in the tenant's scope). */
  readonly db: Database;
  /** The server last started. */
  readonly server: ServerProcess;
  /** Starts the server, armed at `crashAt` when given, after stopping the one before if it still runs. The first
   * start registers the agent's and the principal's keys. */
  start(crashAt?: CrashPoint): Promise<ServerProcess>;
  /** Waits until the server has killed itself at its crash point. */
  crashed(): Promise<void>;
  /** A live engine POST with its recognition proof for the exact body (a fresh proof each time). */
  post(path: string, purpose: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** PUT /v1/admin/settlement/config, expected to succeed. */
  configure(body: Record<string, unknown>): Promise<void>;
  /** A completion_budget_v1 version with `release_mode: metered`, rolled out, for an intent to bind (v7). */
  meteredPolicy(): Promise<NonNullable<CreateOptions['policy']>>;
  createIntent(options?: Partial<Pick<CreateOptions, 'amountCents' | 'settlementRail' | 'policy'>>): Promise<string>;
  /** The payee's signed evidence, expected to be recorded. */
  evidence(intentId: string, payload: Record<string, unknown>): Promise<void>;
  /** Confirms the settlement: the answer (the intent as settled). */
  confirm(intentId: string): Promise<Record<string, any>>;
  read(intentId: string): Promise<Record<string, any>>;
  /** The intent's instructions, payout before refund. */
  instructions(intentId: string): Promise<InstructionRow[]>;
  /** Polls the instructions until `done` holds for them (the sweeper passes every 30 s, the first soon after start). */
  waitForInstructions(intentId: string, done: (rows: InstructionRow[]) => boolean, what: string): Promise<InstructionRow[]>;
  /** `svc ledger verify` of the tenant exits 0. */
  expectLedgerVerifies(): Promise<void>;
  close(): Promise<void>;
}

/** A fresh database and live tenant; `name` tells the test's keys and parties apart in logs. */
export async function setUpCrashRig(name: string, options: { startTimeoutMs?: number } = {}): Promise<CrashRig> {
  const database: TestDatabase = await createTestDatabase();
  const db = new Database({ ...database.connection, max: 2 });
  const tenant = await createTestTenant(database.connection, 'live');
  const secretsKey = randomBytes(32).toString('base64');
  const agent = ed25519SignerFromSeed(randomBytes(32));
  const keyId = `agent-${name}`;
  const principal: Party = party(`did:principal:${name}`);
  const payee: Party = party(`did:payee:${name}`);
  let current: ServerProcess | undefined;
  let registered = false;

  const server = (): ServerProcess => {
    if (!current) throw new Error('no server started');
    return current;
  };
  const admin = (method: string, path: string, body?: unknown) => call(server().baseUrl, tenant.adminKey, method, path, body);
  const post = (path: string, purpose: string, body: unknown, headers: Record<string, string> = {}) => {
    const proof = createRecognitionProof({ signer: agent, keyId, purpose, tenantId: tenant.tenantId, method: 'POST', path, body: JSON.stringify(body) }).headerValue;
    return call(server().baseUrl, tenant.adminKey, 'POST', path, body, { 'x-svc-agent-recognition-proof': proof, ...headers });
  };
  const instructions = async (intentId: string) =>
    db.tenant(tenant.tenantId, async (tx) =>
      (await tx.query<InstructionRow>(
        `SELECT kind, status, amount_cents::int AS amount, reference, claimed_at IS NOT NULL AS claimed
         FROM rail_instructions WHERE intent_id = $1 ORDER BY kind`,
        [intentId],
      )).rows);

  return {
    tenant,
    db,
    get server() {
      return server();
    },
    async start(crashAt) {
      await current?.stop('SIGTERM');
      current = await startServerProcess(
        { DATABASE_URL: database.url, LOG_LEVEL: 'warn', SVC_SECRETS_KEY: secretsKey, ...(crashAt ? { SVC_TEST_CRASH_AT: crashAt } : {}) },
        options.startTimeoutMs ?? 120_000,
      );
      if (!registered) {
        for (const [kind, subject, hex] of [['agent', keyId, agent.publicKey.hex], ['principal', principal.did, principal.signer.publicKey.hex]] as const) {
          const answer = await admin('POST', '/v1/registry/keys', { kind, subject, public_key_ed25519_hex: hex });
          expect(answer.status, answer.text).toBe(201);
        }
        registered = true;
      }
      return current;
    },
    async crashed() {
      const running = server();
      expect(await running.exited, running.output()).toBeNull();
      expect(running.child.signalCode).toBe('SIGKILL');
    },
    post,
    async configure(body) {
      const configured = await admin('PUT', '/v1/admin/settlement/config', body);
      expect(configured.status, configured.text).toBe(200);
    },
    async meteredPolicy() {
      const drafted = await admin('POST', '/harbor/policy/v1/drafts', { template_id: 'completion_budget_v1', parameters: { release_mode: 'metered' } });
      expect(drafted.status, drafted.text).toBe(201);
      const rolled = await admin('POST', '/harbor/policy/v1/rollout', { template_id: 'completion_budget_v1', version_seq: drafted.json.version_seq });
      expect(rolled.status, rolled.text).toBe(200);
      return {
        templateId: 'completion_budget_v1', versionSeq: drafted.json.version_seq, contentDigestHex: drafted.json.content_digest,
        materializedPredicate: drafted.json.materialized_predicate,
      };
    },
    async createIntent(intent = {}) {
      const body = signedCreateBody({ tenantId: tenant.tenantId, principal, payee, ...intent });
      const created = await post('/harbor/intents', recognitionPurposes.intentCreate, body);
      expect(created.status, created.text).toBe(201);
      return body.intent_id as string;
    },
    async evidence(intentId, payload) {
      const recorded = await post(`/harbor/intents/${intentId}/evidence`, recognitionPurposes.evidenceSubmit, signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload }));
      expect(recorded.status, recorded.text).toBe(200);
    },
    async confirm(intentId) {
      const confirmed = await post(`/harbor/intents/${intentId}/settlement/confirm`, recognitionPurposes.settlementConfirm, {});
      expect(confirmed.status, confirmed.text).toBe(200);
      return confirmed.json;
    },
    async read(intentId) {
      const answer = await admin('GET', `/harbor/intents/${intentId}`);
      expect(answer.status, answer.text).toBe(200);
      return answer.json;
    },
    instructions,
    async waitForInstructions(intentId, done, what) {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const rows = await instructions(intentId);
        if (done(rows)) return rows;
        if (Date.now() > deadline) throw new Error(`${what} did not happen: ${JSON.stringify(rows)}\n${current?.output() ?? ''}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    },
    async expectLedgerVerifies() {
      const verified = await runCli(['ledger', 'verify', '--tenant-id', tenant.tenantId, '--json'], { DATABASE_URL: database.url });
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    },
    async close() {
      await current?.stop('SIGKILL');
      await db.close();
      await database.drop();
    },
  };
}
