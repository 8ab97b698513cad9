// A live tenant for the live rail tests: registered agent and principal keys (live engine mutations need a
// recognition proof and a registered principal key), and the requests of the lifecycle with their proofs.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type pg from 'pg';
import { expect } from 'vitest';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { createRecognitionProof, recognitionPurposes } from '../../src/signing/recognition.ts';
import { runRailSweep, type RailSweepReport } from '../../src/services/maintenance.ts';
import { Database } from '../../src/infra/database.ts';
import { bearer, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';

/** The secrets key the live tests configure (AppOptions.secretsKey): 32 random bytes, standard base64. */
export const liveSecretsKey = randomBytes(32).toString('base64');

export interface LiveTenant {
  readonly tenant: TestTenant;
  configure(body: Record<string, unknown>): Promise<LightMyRequestResponse>;
  createIntent(options?: { settlementRail?: string; amountCents?: number }): Promise<string>;
  /** POST …/fund with the rail's headers, a fresh recognition proof, and the idempotency key when given. */
  fund(intentId: string, headers?: Record<string, string>, idempotencyKey?: string): Promise<LightMyRequestResponse>;
  /** Evidence whose payload passes the default release rule (`completed`) or fails it. */
  evidence(intentId: string, status?: 'completed' | 'failed'): Promise<LightMyRequestResponse>;
  confirm(intentId: string): Promise<LightMyRequestResponse>;
  read(intentId: string): Promise<Record<string, any>>;
  /** The maintenance sweep of the live rails, by hand (apps are built with maintenance off). */
  sweep(): Promise<RailSweepReport>;
}

export async function setUpLive(app: FastifyInstance, connection: pg.PoolConfig): Promise<LiveTenant> {
  const tenant = await createTestTenant(connection, 'live');
  const agent = ed25519SignerFromSeed(randomBytes(32));
  const keyId = `agent-${tenant.tenantId}`;
  const principal = party(`did:principal:${tenant.tenantId}`);
  const payee = party(`did:payee:${tenant.tenantId}`);
  for (const [kind, subject, hex] of [
    ['agent', keyId, agent.publicKey.hex],
    ['principal', principal.did, principal.signer.publicKey.hex],
  ] as const) {
    const response = await app.inject({
      method: 'POST', url: '/v1/registry/keys', headers: bearer(tenant.adminKey), payload: { kind, subject, public_key_ed25519_hex: hex },
    });
    expect(response.statusCode, response.body).toBe(201);
  }

  const post = (path: string, purpose: string, body: string, headers: Record<string, string> = {}) => {
    const proof = createRecognitionProof({ signer: agent, keyId, purpose, tenantId: tenant.tenantId, method: 'POST', path, body }).headerValue;
    return app.inject({
      method: 'POST',
      url: path,
      headers: { ...bearer(tenant.adminKey), 'content-type': 'application/json', 'x-svc-agent-recognition-proof': proof, ...headers },
      payload: body,
    });
  };

  return {
    tenant,
    configure: (body) => app.inject({ method: 'PUT', url: '/v1/admin/settlement/config', headers: bearer(tenant.adminKey), payload: body }),
    async createIntent(options = {}) {
      const body = signedCreateBody({
        tenantId: tenant.tenantId, principal, payee, settlementRail: options.settlementRail ?? 'x402_usdc_base', amountCents: options.amountCents ?? 500,
      });
      const response = await post('/harbor/intents', recognitionPurposes.intentCreate, JSON.stringify(body));
      expect(response.statusCode, response.body).toBe(201);
      return body.intent_id as string;
    },
    fund: (intentId, headers = {}, idempotencyKey) =>
      post(`/harbor/intents/${intentId}/fund`, recognitionPurposes.intentFund, '{}', { ...headers, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) }),
    evidence: (intentId, status = 'completed') =>
      post(`/harbor/intents/${intentId}/evidence`, recognitionPurposes.evidenceSubmit,
        JSON.stringify(signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status } }))),
    confirm: (intentId) => post(`/harbor/intents/${intentId}/settlement/confirm`, recognitionPurposes.settlementConfirm, '{}'),
    async read(intentId) {
      const response = await app.inject({ method: 'GET', url: `/harbor/intents/${intentId}`, headers: bearer(tenant.adminKey) });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    },
    async sweep() {
      const database = new Database({ ...connection, max: 2 });
      try {
        return await runRailSweep(database, app.railRuntime, app.gatewayKeys);
      } finally {
        await database.close();
      }
    },
  };
}
