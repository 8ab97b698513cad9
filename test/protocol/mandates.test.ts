// Mandates over HTTP on a real Postgres: a signed mandate verified and imported for an intent, its authorization
// receipt checked independently, the intent's settlement receipt naming it; every refusal of the import and of
// the verify route, each with its own code.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { mandateImportBodyBytes, mandateImportPath, mandateImportPurpose } from '../../src/services/mandate-service.ts';
import { signArtifact } from '../../src/signing/artifacts.ts';
import { ed25519SignerFromSeed, type Ed25519Signer } from '../../src/signing/ed25519.ts';
import { createRecognitionProof } from '../../src/signing/recognition.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { inOneHour, party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';
import { verifyClientAgentReceipt, verifyClientAuthorizationReceipt, verifyClientSettlementReceipt } from '../helpers/client-verifier.ts';
import { expectReceipt } from '../helpers/receipts.ts';
import { runCli } from '../helpers/server-process.ts';

let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');
const agentA = ed25519SignerFromSeed(new Uint8Array(32).fill(11));
const agentB = ed25519SignerFromSeed(new Uint8Array(32).fill(12));

const post = (url: string, payload: object, headers: Record<string, string> = {}, tenant = acme) =>
  app.inject({ method: 'POST', url, headers: { ...bearer(tenant.adminKey), ...headers }, payload });
const get = (url: string, tenant = acme) => app.inject({ method: 'GET', url, headers: bearer(tenant.adminKey) });

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
  for (const [kind, subject, hex] of [['principal', principal.did, principal.signer.publicKey.hex], ['agent', 'agent-a', agentA.publicKey.hex], ['agent', 'agent-b', agentB.publicKey.hex]]) {
    const registered = await post('/v1/registry/keys', { kind, subject, public_key_ed25519_hex: hex });
    expect(registered.statusCode, registered.body).toBe(201);
  }
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

async function createIntent(): Promise<string> {
  const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, amountCents: 500, allowedTools: ['search.web', 'Harbor.Evidence_Submit'] });
  const response = await post('/harbor/intents', body);
  expect(response.statusCode, response.body).toBe(201);
  return body.intent_id as string;
}

function mandateBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    authorization: { kind: 'principal', tenant_id: acme.tenantId, principal_subject: principal.did, principal_type: 'user' },
    agent: { subject: 'agent-a', issuer: 'did:operator:acme', key_id: 'agent-a', display_name: 'Agent <A> & co' },
    allowed_actions: ['harbor.intent.fund'],
    allowed_tools: ['harbor.evidence_submit', 'search.web'],
    spend_ceiling: { amount_minor: 1000, currency: 'usd' },
    settlement: { default_rail: 'x402_usdc_base', allowed_rails: ['processor_mpp', 'x402_usdc_base'] },
    constraint: { kind: 'predicate', id: 'completion', version: '1', digest_sha256_hex: '', uri: '' },
    expires_at: inOneHour(),
    nonce: randomUUID(),
    human_presence_mode: 'human_not_present',
    ...overrides,
  };
}

const signMandate = (body: Record<string, unknown>, signer: Ed25519Signer = principal.signer) => signArtifact('svc.agent_mandate_v1', body, signer);

function importBody(signedMandate: Record<string, unknown>, intentId: string, agent: { signer: Ed25519Signer; keyId: string } = { signer: agentA, keyId: 'agent-a' }) {
  const body: Record<string, unknown> = {
    signed_mandate: signedMandate,
    intent_id: intentId,
    transport_binding: { source_protocol: 'ap2', partner_platform: 'shop & co', request_id: 'req-1' },
  };
  const { proof } = createRecognitionProof({
    signer: agent.signer, keyId: agent.keyId, purpose: mandateImportPurpose, tenantId: acme.tenantId, method: 'POST', path: mandateImportPath, body: mandateImportBodyBytes(body),
  });
  return { ...body, recognition_proof: proof };
}

describe('mandate import', () => {
  it('verifies, imports, answers the authorization receipt, and the settlement receipt names it', async () => {
    const intentId = await createIntent();
    const signed = signMandate(mandateBody());
    const verified = (await post('/protocol/v2/mandates/verify', { signed_mandate: signed })).json();
    expect(verified).toMatchObject({ valid: true, kind: 'svc.agent_mandate_v1', mandate_digest_sha256_hex: signed.message_digest_sha256_hex });
    // The public client posts the signed mandate itself as the body: the same verdict.
    const bare = await post('/protocol/v2/mandates/verify', signed);
    expect(bare.statusCode, bare.body).toBe(200);
    expect(bare.json()).toEqual(verified);
    expectReceipt(signed, [principal.signer.publicKey.hex]);

    const imported = await post('/protocol/v2/mandates', importBody(signed, intentId));
    expect(imported.statusCode, imported.body).toBe(200);
    const answer = imported.json();
    expect(answer).toMatchObject({ valid: true, intent_id: intentId, mandate_digest_sha256_hex: signed.message_digest_sha256_hex, mandate: { authorization: { tenant_id: acme.tenantId } } });
    const receipt = answer.authorization_receipt;
    expect(receipt).toMatchObject({
      kind: 'svc.protocol_authorization_receipt_v1', status: 'authorized', intent_id: intentId, tenant_id: acme.tenantId,
      receipt_id: `authz:${signed.message_digest_sha256_hex}`, mandate_digest_sha256_hex: signed.message_digest_sha256_hex,
      imported_mandate_signing_public_key_ed25519_hex: principal.signer.publicKey.hex,
      transport_binding: { source_protocol: 'ap2', partner_platform: 'shop & co', request_id: 'req-1' },
    });
    // HTML escaping applies to this kind: the independent check rebuilds "\u0026".
    const trusted = [((await get('/.well-known/jwks.json')).json().keys as Array<{ x: string }>).map((key) => Buffer.from(key.x, 'base64url').toString('hex'))].flat();
    expectReceipt(receipt, trusted);
    expect(verifyClientAuthorizationReceipt(receipt, trusted)).toBe(receipt.message_digest_sha256_hex);
    const read = (await get(`/protocol/v2/receipts/${receipt.receipt_id}`)).json();
    expect(read).toEqual(receipt);
    // Offline, with the CLI: the receipt as read, against the published keys.
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mandate-'));
    try {
      const file = path.join(directory, 'authorization.json');
      fs.writeFileSync(file, JSON.stringify(read));
      const jwks = path.join(directory, 'jwks.json');
      fs.writeFileSync(jwks, JSON.stringify((await get('/.well-known/jwks.json')).json()));
      const result = await runCli(['receipt', 'verify', file, '--jwks', jwks, '--json'], {});
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, kind: 'svc.protocol_authorization_receipt_v1' });
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
    expect((await post('/protocol/v2/receipts/verify', { receipt })).json()).toMatchObject({ valid: true, kind: 'svc.protocol_authorization_receipt_v1' });
    expect(answer.mandate_leaf_index + 1).toBe(answer.leaf_index);

    // Settle it: the settlement receipt carries the import's receipt id, digest and transport binding.
    const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
    await post(`/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }) });
    await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed' } }));
    expect((await post(`/harbor/intents/${intentId}/settlement/confirm`, {})).json().state).toBe('released');
    const settlement = (await get(`/protocol/v2/receipts/${intentId}`)).json();
    expect(settlement).toMatchObject({ authorization_receipt_id: receipt.receipt_id, mandate_digest_sha256_hex: signed.message_digest_sha256_hex, transport_binding: receipt.transport_binding });
    expectReceipt(settlement, trusted);
    expect(verifyClientSettlementReceipt(settlement, trusted)).toBe(settlement.message_digest_sha256_hex);
    // The intent-terminal receipt names the mandate's digest, and the attestation of the mandate the client requires
    // beside it (source: the import's protocol; reference: its nonce, no external authorization id was given).
    const terminal = (await get(`/protocol/v2/agent-receipts/${intentId}`)).json();
    expect(terminal.authorization.mandate_digest_sha256_hex).toBe(signed.message_digest_sha256_hex);
    expect(terminal.external_attestations).toEqual([
      { source: 'ap2', kind: 'agent_mandate_v1', digest_sha256_hex: signed.message_digest_sha256_hex, reference_id: signed.nonce },
    ]);
    expectReceipt(terminal, trusted);
    expect(verifyClientAgentReceipt(terminal, trusted)).toBe(terminal.message_digest_sha256_hex);
  });

  it('names the external authorization id as the mandate attestation\'s reference when the import gave one', async () => {
    const intentId = await createIntent();
    const signed = signMandate(mandateBody());
    const body: Record<string, unknown> = { signed_mandate: signed, intent_id: intentId, transport_binding: { source_protocol: 'acp', external_authorization_id: 'acp-auth-7' } };
    const { proof } = createRecognitionProof({
      signer: agentA, keyId: 'agent-a', purpose: mandateImportPurpose, tenantId: acme.tenantId, method: 'POST', path: mandateImportPath, body: mandateImportBodyBytes(body),
    });
    expect((await post('/protocol/v2/mandates', { ...body, recognition_proof: proof })).statusCode).toBe(200);
    const challenge = await post(`/harbor/intents/${intentId}/fund`, {});
    await post(`/harbor/intents/${intentId}/fund`, {}, { 'payment-signature': sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success }) });
    // The client attested the same mandate itself, and something else: the mandate is listed once, first.
    const attestations = [
      { source: 'ap2', kind: 'agent_mandate_v1', digest_sha256_hex: signed.message_digest_sha256_hex },
      { source: 'x402', kind: 'delivery_receipt_v1', digest_sha256_hex: '12'.repeat(32) },
    ];
    await post(`/harbor/intents/${intentId}/evidence`, signedEvidenceBody({ tenantId: acme.tenantId, intentId, payee, payload: { status: 'completed' } }), {
      'x-svc-agent-receipt-attestations': JSON.stringify(attestations),
    });
    await post(`/harbor/intents/${intentId}/settlement/confirm`, {});
    const terminal = (await get(`/protocol/v2/agent-receipts/${intentId}`)).json();
    expect(terminal.external_attestations).toEqual([
      { source: 'acp', kind: 'agent_mandate_v1', digest_sha256_hex: signed.message_digest_sha256_hex, reference_id: 'acp-auth-7' },
      attestations[1],
    ]);
    expect(verifyClientAgentReceipt(terminal)).toBe(terminal.message_digest_sha256_hex);
  });

  it('refuses, each with its own code, a mandate that does not cover the intent or cannot be trusted', async () => {
    const intentId = await createIntent();
    const stranger = ed25519SignerFromSeed(new Uint8Array(32).fill(13));
    const cases: Array<[string, Record<string, unknown>, number, string, { signer: Ed25519Signer; keyId: string }?, string?]> = [
      ['signed by a key not registered for the principal', signMandate(mandateBody(), stranger), 422, 'mandate.signer_unregistered'],
      ['for another tenant', signMandate(mandateBody({ authorization: { kind: 'principal', tenant_id: globex.tenantId, principal_subject: principal.did, principal_type: 'user' } })), 400, 'artifact.tenant_mismatch'],
      ['expired', signMandate(mandateBody({ expires_at: '2020-01-01T00:00:00Z' })), 422, 'mandate.expired'],
      ['a ceiling below the amount', signMandate(mandateBody({ spend_ceiling: { amount_minor: 499, currency: 'usd' } })), 422, 'mandate.spend_ceiling_exceeded'],
      ['another currency', signMandate(mandateBody({ spend_ceiling: { amount_minor: 1000, currency: 'eur' } })), 422, 'mandate.currency_mismatch'],
      ['not the intent\'s rail', signMandate(mandateBody({ settlement: { default_rail: 'processor_mpp', allowed_rails: ['processor_mpp'] } })), 422, 'mandate.rail_not_allowed'],
      ['missing one of the intent\'s tools', signMandate(mandateBody({ allowed_tools: ['search.web'] })), 422, 'mandate.tool_not_allowed'],
      ['not allowing the fund action', signMandate(mandateBody({ allowed_actions: ['harbor.intent.evidence.submit'] })), 422, 'mandate.action_not_allowed'],
      ['presented by another agent', signMandate(mandateBody()), 422, 'mandate.agent_mismatch', { signer: agentB, keyId: 'agent-b' }],
      ['for an intent that does not exist', signMandate(mandateBody()), 404, 'intent.not_found', undefined, randomUUID()],
      ['a tampered mandate', { ...signMandate(mandateBody()), nonce: 'changed' }, 400, 'artifact.signature_invalid'],
      ['an unknown schema_version', { ...signMandate(mandateBody()), schema_version: 9 }, 400, 'artifact.schema_version_unsupported'],
    ];
    for (const [label, signed, status, code, agent, otherIntent] of cases) {
      const response = await post('/protocol/v2/mandates', importBody(signed, otherIntent ?? intentId, agent));
      expect(response.statusCode, `${label}: ${response.body}`).toBe(status);
      expect(response.json().error.code, label).toBe(code);
    }
    // A recognition proof for another body is refused before anything is stored.
    const body = importBody(signMandate(mandateBody()), intentId);
    const refused = await post('/protocol/v2/mandates', { ...body, intent_id: await createIntent() });
    expect(refused.json().error.code).toBe('recognition.body_mismatch');
  });

  it('imports a mandate once: its nonce is single-use per tenant', async () => {
    const signed = signMandate(mandateBody());
    expect((await post('/protocol/v2/mandates', importBody(signed, await createIntent()))).statusCode).toBe(200);
    const again = await post('/protocol/v2/mandates', importBody(signed, await createIntent()));
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('mandate.nonce_replayed');
  });
});

describe('mandate verify route', () => {
  it('answers valid:false with the reason, each its own code', async () => {
    const good = signMandate(mandateBody());
    const wrongKind = { ...good, kind: 'svc.protocol_settlement_receipt_v1' };
    const cases: Array<[string, unknown, string]> = [
      ['unknown schema_version', { ...good, schema_version: 2, ed25519_signature_hex: 'zz' }, 'artifact.schema_version_unsupported'],
      ['a receipt sent to the mandate route', wrongKind, 'artifact.kind_mismatch'],
      ['a tampered field', { ...good, spend_ceiling: { amount_minor: 99999, currency: 'usd' } }, 'artifact.signature_invalid'],
      ['another tenant\'s mandate', signMandate(mandateBody({ authorization: { kind: 'tenant', tenant_id: globex.tenantId, principal_subject: '', principal_type: '' } })), 'artifact.tenant_mismatch'],
      ['an expired mandate', signMandate(mandateBody({ expires_at: '2020-01-01T00:00:00Z' })), 'mandate.expired'],
      ['an unregistered signer', signMandate(mandateBody(), agentB), 'mandate.signer_unregistered'],
    ];
    for (const [label, signed, code] of cases) {
      const response = await post('/protocol/v2/mandates/verify', { signed_mandate: signed });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json(), label).toMatchObject({ valid: false, code });
      const bare = await post('/protocol/v2/mandates/verify', signed as object);
      expect(bare.json(), `${label}, posted bare`).toMatchObject({ valid: false, code });
    }
  });
});
