// What the SDK signs: the create and evidence bodies byte for byte as the engine tests build them (the knowledge
// of test/helpers/intents.ts, now in the SDK), recognition proofs that verify against the request as sent, and
// local refusals of unsignable input before anything is sent.
import { afterEach, describe, expect, it } from 'vitest';
import { keyFromSeed, SvcArgumentError, SvcSigningError } from '../../src/sdk/index.ts';
import { bytesToBase64, ed25519SignerFromSeed, verifyRecognitionProof } from '../../src/signing/index.ts';
import { signedCreateBody, signedEvidenceBody, type Party } from '../helpers/intents.ts';
import { evidenceAnswerFixture, intentFixture, intentIdFixture, json, openScriptedClient, startScriptedServer, type ScriptedServer } from './support.ts';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const principalSeed = new Uint8Array(32).fill(7);
const payeeSeed = new Uint8Array(32).fill(9);
const helperParty = (did: string, seed: Uint8Array): Party => {
  const signer = ed25519SignerFromSeed(seed);
  return { did, signer, publicKeyBase64: bytesToBase64(signer.publicKey.bytes) };
};

const common = {
  amountCents: 700,
  deadline: '2030-01-02T15:04:05Z',
  settlementRail: 'processor_mpp',
  allowedTools: ['search.web', 'Harbor.Evidence_Submit'],
  evidenceSchema: { type: 'object', properties: { status: { type: 'string' } } },
  predicate: { version: 1, root: { op: 'completion', path: ['status'], value: 'completed' } },
};

describe('signed bodies', () => {
  it('builds the v6 create envelope exactly as the engine tests do', async () => {
    server = await startScriptedServer(() => json(201, intentFixture()));
    const { client } = await openScriptedClient(server);
    await client.intents.create({
      ...common,
      intentId: intentIdFixture,
      principal: { did: 'did:principal:a', key: keyFromSeed(principalSeed) },
      payee: { did: 'did:payee:b', publicKey: keyFromSeed(payeeSeed).publicKeyBase64 },
    });
    const expected = signedCreateBody({
      ...common,
      tenantId: 'acme',
      intentId: intentIdFixture,
      principal: helperParty('did:principal:a', principalSeed),
      payee: helperParty('did:payee:b', payeeSeed),
    });
    expect(server.to('/harbor/intents')[0]!.body.toString()).toBe(JSON.stringify(expected));
  });

  it('builds the v7 envelope from a policy version, without predicate_dsl', async () => {
    server = await startScriptedServer(() => json(201, intentFixture({ signing_version: 7 })));
    const { client } = await openScriptedClient(server);
    const version = {
      object: 'policy_version' as const, template_id: 'completion_v1', version_seq: 3, parameters: {}, materialized_predicate: common.predicate,
      human_summary: '', content_digest: 'ab'.repeat(32), created_at: '', is_head: true,
    };
    const { predicate: _predicate, ...withoutPredicate } = common;
    await client.intents.create({
      ...withoutPredicate, intentId: intentIdFixture, policyBinding: version,
      principal: { did: 'did:principal:a', key: keyFromSeed(principalSeed) }, payee: { did: 'did:payee:b', publicKey: keyFromSeed(payeeSeed) },
    });
    const expected = signedCreateBody({
      ...withoutPredicate, tenantId: 'acme', intentId: intentIdFixture, principal: helperParty('did:principal:a', principalSeed), payee: helperParty('did:payee:b', payeeSeed),
      policy: { templateId: 'completion_v1', versionSeq: 3, contentDigestHex: version.content_digest, materializedPredicate: common.predicate },
    });
    expect(server.to('/harbor/intents')[0]!.body.toString()).toBe(JSON.stringify(expected));
  });

  it('signs evidence with the payee key exactly as the engine tests do', async () => {
    server = await startScriptedServer(() => json(200, evidenceAnswerFixture()));
    const { client } = await openScriptedClient(server);
    const payload = { status: 'completed', cost_cents: 10 };
    await client.intents.submitEvidence(intentIdFixture, { payee: { did: 'did:payee:b', key: keyFromSeed(payeeSeed) }, payload, submittedAt: '2030-01-02T15:04:05Z' });
    const expected = signedEvidenceBody({ tenantId: 'acme', intentId: intentIdFixture, payee: helperParty('did:payee:b', payeeSeed), payload, submittedAt: '2030-01-02T15:04:05Z' });
    expect(server.to(`/harbor/intents/${intentIdFixture}/evidence`)[0]!.body.toString()).toBe(JSON.stringify(expected));
  });

  it('sends a recognition proof that verifies against the request as it arrived', async () => {
    server = await startScriptedServer(() => json(201, intentFixture()));
    const agentKey = keyFromSeed(new Uint8Array(32).fill(3));
    const { client } = await openScriptedClient(server, { agent: { keyId: 'agent-1', key: agentKey }, now: Date.now });
    await client.intents.create({ ...common, intentId: intentIdFixture, principal: { did: 'did:principal:a', key: keyFromSeed(principalSeed) }, payee: { did: 'did:payee:b', publicKey: agentKey } });
    const request = server.to('/harbor/intents')[0]!;
    const verified = verifyRecognitionProof(
      JSON.parse(Buffer.from(request.headers['x-svc-agent-recognition-proof'] as string, 'base64url').toString('utf8')),
      { purpose: 'harbor.intent.create', method: 'POST', path: '/harbor/intents', bodyBytes: new Uint8Array(request.body), tenantId: 'acme', nowMs: Date.now(), publicKey: agentKey.publicKey },
    );
    expect(verified.keyId).toBe('agent-1');
  });
});

describe('local refusals', () => {
  it('refuses unsignable or ambiguous input before sending anything', async () => {
    server = await startScriptedServer(() => json(201, intentFixture()));
    const { client } = await openScriptedClient(server);
    const parties = { principal: { did: 'did:principal:a', key: keyFromSeed(principalSeed) }, payee: { did: 'did:payee:b', publicKey: keyFromSeed(payeeSeed) } };
    await expect(client.intents.create({ ...common, ...parties, deadline: 'tomorrow' })).rejects.toMatchObject({ constructor: SvcSigningError, code: 'signing.value_invalid' });
    await expect(client.intents.create({ ...common, ...parties, payee: { did: 'x', publicKey: 'not base64!' } })).rejects.toThrow(SvcSigningError);
    await expect(client.intents.create({ ...common, ...parties, intentId: 'not-a-uuid' })).rejects.toThrow(SvcSigningError);
    await expect(client.intents.create({ ...common, ...parties, predicateRef: 'completion_v1@1' })).rejects.toThrow(SvcArgumentError);
    await expect(client.intents.create({ ...common, ...parties, idempotencyKey: '' })).rejects.toThrow(SvcArgumentError);
    await expect(client.intents.create({ ...common, ...parties, idempotencyKey: 'k'.repeat(257) })).rejects.toThrow(SvcArgumentError);
    await expect(client.intents.create({ ...common, ...parties, idempotencyKey: 'two\nlines' })).rejects.toThrow(SvcArgumentError);
    expect(() => keyFromSeed('abc')).toThrow(SvcSigningError);
    expect(() => keyFromSeed(new Uint8Array(31))).toThrow(SvcSigningError);
    expect(server.to('/harbor/intents')).toHaveLength(0);
  });
});
