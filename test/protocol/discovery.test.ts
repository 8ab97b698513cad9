// Discovery and task contracts over HTTP: the A2A agent card read back through the A2A SDK's own codec and type,
// with its URLs from the configured public base URL; the agent receipt JSON Schema as served, compiled by ajv
// (2020-12), refusing a forbidden field at any depth; the receipt signing keys, as the client pins them; task
// contracts paged, and another tenant's contract 404.
import { AgentCard, A2A_PROTOCOL_VERSION, AGENT_CARD_PATH } from '@a2a-js/sdk';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app as svcApp } from '../../src/app.ts';
import { GatewayKeyring } from '../../src/infra/gateway-keys.ts';
import { createLogger } from '../../src/infra/logging.ts';
import { createFastify } from '../../src/server-options.ts';
import { agentReceiptForbiddenFields } from '../../src/receipts/agent-receipt-schema.ts';
import { signArtifact } from '../../src/signing/artifacts.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { bearer, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { signingKeysOf, verifyClientSettlementReceipt } from '../helpers/client-verifier.ts';
import { agentReceiptSchemaAccepts } from '../helpers/receipts.ts';
import { fixtures } from './artifact-fixtures.ts';

const publicBaseUrl = 'https://svc.example.com/base';
let database: TestDatabase;
let app: FastifyInstance;
let acme: TestTenant;
let globex: TestTenant;
const principal = party('did:principal:alice');
const payee = party('did:payee:tools-inc');
// A deployment mid-rotation: the active key, a key staged to sign next, and a retired one still published.
const keyring = new GatewayKeyring({
  keys: [
    { kid: 'gk_retired', seed_hex: '0c'.repeat(32), status: 'retired', created_at: '2026-01-01T00:00:00Z' },
    { kid: 'gk_active', seed_hex: '0a'.repeat(32), status: 'active', created_at: '2026-03-01T00:00:00Z' },
    { kid: 'gk_next', seed_hex: '0d'.repeat(32), status: 'next', created_at: '2026-06-01T00:00:00Z' },
  ],
});

beforeAll(async () => {
  database = await createTestDatabase();
  app = createFastify(createLogger('silent'));
  await app.register(svcApp, { connection: database.connection, gatewayKeys: keyring, maintenance: false, publicBaseUrl, validateResponses: true });
  await app.ready();
  acme = await createTestTenant(database.connection, 'sandbox');
  globex = await createTestTenant(database.connection, 'sandbox');
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const get = (url: string, tenant?: TestTenant) => app.inject({ method: 'GET', url, headers: tenant ? bearer(tenant.adminKey) : {} });

describe('agent card', () => {
  it('is an A2A card as the SDK reads it, addressed at the public base URL', async () => {
    const response = await get(`/${AGENT_CARD_PATH}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=3600');
    const json = response.json();
    // The SDK's codec keeps exactly the fields of its AgentCard: a round trip that changes nothing means every field
    // we serve is one the protocol has, of the type it has.
    const card: AgentCard = AgentCard.fromJSON(json);
    expect(AgentCard.toJSON(card)).toEqual(json);
    for (const field of ['name', 'description', 'supportedInterfaces', 'version', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills']) {
      expect(json, field).toHaveProperty(field);
    }
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${publicBaseUrl}/protocol/v2/a2a`, protocolBinding: 'HTTP+JSON', protocolVersion: A2A_PROTOCOL_VERSION });
    expect(card.provider?.url).toBe(publicBaseUrl);
    expect(card.skills.map((skill) => skill.id)).toContain('paid_tool_escrow');
    expect(card.securitySchemes.svc_api_key?.scheme).toMatchObject({ $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer' } });
    expect(card.securityRequirements[0]?.schemes).toHaveProperty('svc_api_key');
  });
});

describe('agent receipt schema', () => {
  it('is served as a 2020-12 schema that ajv compiles, and refuses forbidden fields at any depth', async () => {
    const response = await get('/.well-known/agent-receipt-v1.json');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/schema\+json/);
    const schema = response.json();
    expect(schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', $id: `${publicBaseUrl}/.well-known/agent-receipt-v1.json` });
    const validate = new Ajv2020({ strict: true }).compile(schema);
    expect(validate({})).toBe(false);
    // The test helper compiles the same document (with another base URL) and checks every receipt the tests read.
    const receipt = signArtifact('svc.agent_receipt_v1', fixtures['svc.agent_receipt_v1']!, ed25519SignerFromSeed(new Uint8Array(32).fill(5)));
    expect(validate(receipt)).toBe(true);
    expect(agentReceiptSchemaAccepts(receipt)).toBe(true);
    const nested = (field: string) => ({ ...receipt, execution: { ...(receipt.execution as object), [field]: 'x' } });
    for (const field of agentReceiptForbiddenFields) {
      expect(validate({ ...receipt, [field]: 'x' }), field).toBe(false);
      expect(validate(nested(field)), field).toBe(false);
      expect(agentReceiptSchemaAccepts(nested(field)), field).toBe(false);
    }
  });
});

describe('receipt signing keys', () => {
  it('publishes every key with its status, in the form the client pins (lowercase hex), at the public base URL', async () => {
    const response = await get('/.well-known/agent-receipt-signing-keys.json');
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const document = response.json();
    expect(document).toEqual({
      schema_version: 1,
      kind: 'svc.agent_receipt_signing_keys_v1',
      issuer: publicBaseUrl,
      signing_algorithm: 'ed25519-sha256-json-v1',
      artifact_kinds: expect.arrayContaining(['svc.protocol_settlement_receipt_v1', 'svc.agent_receipt_v1', 'svc.agent_receipt_transparency_sth_v1']),
      jwks_uri: `${publicBaseUrl}/.well-known/jwks.json`,
      keys: keyring.verificationKeys.map((key) => ({ kid: key.kid, signing_public_key_ed25519_hex: key.publicKeyHex, status: key.status })),
    });
    expect(document.keys.map((key: { status: string }) => key.status).sort()).toEqual(['active', 'next', 'retired']);
    // The same keys as the JWKS, by kid.
    const jwks = (await get('/.well-known/jwks.json')).json();
    for (const key of document.keys) {
      const jwk = jwks.keys.find((entry: { kid: string }) => entry.kid === key.kid);
      expect(Buffer.from(jwk.x, 'base64url').toString('hex')).toBe(key.signing_public_key_ed25519_hex);
    }
    // A receipt signed by the active key verifies against the keys as the client reads them; one by another key does not.
    const body = fixtures['svc.protocol_settlement_receipt_v1']!;
    const signedByActive = signArtifact('svc.protocol_settlement_receipt_v1', body, ed25519SignerFromSeed(new Uint8Array(32).fill(0x0a)));
    expect(verifyClientSettlementReceipt(signedByActive, signingKeysOf(document))).toBe(signedByActive.message_digest_sha256_hex);
    const stranger = signArtifact('svc.protocol_settlement_receipt_v1', body, ed25519SignerFromSeed(new Uint8Array(32).fill(0x0e)));
    expect(() => verifyClientSettlementReceipt(stranger, signingKeysOf(document))).toThrow(/trusted set/);
  });
});

describe('task contracts', () => {
  let intents: string[];

  beforeAll(async () => {
    intents = [];
    for (let index = 0; index < 3; index += 1) {
      const body = signedCreateBody({ tenantId: acme.tenantId, principal, payee, amountCents: 100 + index, allowedTools: ['search.web'] });
      const created = await app.inject({ method: 'POST', url: '/harbor/intents', headers: bearer(acme.adminKey), payload: body });
      expect(created.statusCode, created.body).toBe(201);
      intents.push(body.intent_id as string);
    }
  });

  it('reads one contract: rule, amount, deadline, allowed tools and payee', async () => {
    const contract = (await get(`/protocol/v2/a2a/task-contracts/${intents[0]}`, acme)).json();
    expect(contract).toMatchObject({
      kind: 'svc.a2a_task_contract_v1', contract_id: intents[0], intent_id: intents[0], tenant_id: acme.tenantId, state: 'open',
      amount_cents: 100, currency: 'usd', allowed_tools: ['search.web'], payee_did: payee.did,
      rule: { kind: 'predicate', predicate_dsl: { version: 1 }, predicate_digest_sha256_hex: expect.stringMatching(/^[0-9a-f]{64}$/) },
      deadline: expect.any(String),
    });
  });

  it('pages newest first, and refuses an unknown cursor', async () => {
    const first = (await get('/protocol/v2/a2a/task-contracts?limit=2', acme)).json();
    expect(first).toMatchObject({ object: 'list', limit: 2, has_more: true });
    expect(first.items.map((item: { contract_id: string }) => item.contract_id)).toEqual([intents[2], intents[1]]);
    const second = (await get(`/protocol/v2/a2a/task-contracts?limit=2&cursor=${first.next_cursor}`, acme)).json();
    expect(second).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.items.map((item: { contract_id: string }) => item.contract_id)).toEqual([intents[0]]);
    expect((await get(`/protocol/v2/a2a/task-contracts?cursor=${intents[0]}`, globex)).statusCode).toBe(404);
  });

  it('answers 404 for another tenant\'s contract, and lists none of them', async () => {
    const foreign = await get(`/protocol/v2/a2a/task-contracts/${intents[0]}`, globex);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('task_contract.not_found');
    expect((await get('/protocol/v2/a2a/task-contracts', globex)).json().items).toEqual([]);
  });
});
