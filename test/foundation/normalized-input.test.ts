// Input that is normalised (trimmed, lowercased) is checked after normalising, and the service's own checks refuse
// everything a database CHECK would, so a CHECK is never the first to refuse a caller's input (a 500). Over HTTP
// against the real app: sign-in emails that grow when lowercased, device names with C1 controls, tool names that
// grow; and, over the whole of Unicode, each text rule the service applies compared with its column's CHECK on this
// Postgres.
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceCodeBody } from '../../src/contracts/device-login.ts';
import { emailPatternSource } from '../../src/contracts/sign-in.ts';
import { allowedToolLengthMax, emailLengthMax } from '../../src/limits.ts';
import { normalizeEmail, isValidEmail } from '../../src/services/user-service.ts';
import { SigningError } from '../../src/signing/errors.ts';
import { normalizedAllowedTools } from '../../src/signing/digests.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** "İ" (U+0130) lowercases to "i" and U+0307: the one character whose lowercase is longer. */
const dottedCapitalI = '\u0130';

describe('sign-in emails are checked once lowercased', () => {
  it('refuses an email that outgrows the limit when lowercased with 400 user.email_invalid, and stores nothing', async () => {
    const email = `${dottedCapitalI.repeat(125)}@x.io`;
    expect([...email].length).toBeLessThanOrEqual(emailLengthMax);
    expect([...normalizeEmail(email)].length).toBeGreaterThan(emailLengthMax);
    const response = await app.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email } });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error.code).toBe('user.email_invalid');
  });

  it('takes one that still fits, and counts characters, not UTF-16 units', async () => {
    for (const email of [`${dottedCapitalI.repeat(124)}@x.io`, `${'\u{1F600}'.repeat(200)}@x.io`, `ANN.${'ß'.repeat(20)}@EXAMPLE.COM`]) {
      const response = await app.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email } });
      expect(response.statusCode, `${email}: ${response.body}`).toBe(200);
    }
  });
});

describe('device names', () => {
  it('refuses every control character, C1 (U+0080–U+009F) included, at the schema', async () => {
    const controls = [0x00, 0x01, 0x1f, 0x7f, ...Array.from({ length: 0x20 }, (_, index) => 0x80 + index)].map((codePoint) => String.fromCodePoint(codePoint));
    for (const control of controls) {
      const response = await app.inject({ method: 'POST', url: '/v1/public/auth/device/code', payload: { client_name: `svc${control}cli` } });
      expect(response.statusCode, `U+${control.codePointAt(0)!.toString(16)}: ${response.body}`).toBe(400);
      expect(['request.invalid', 'request.character_invalid']).toContain(response.json().error.code);
    }
  });

  it('takes other text: accents, emoji, no-break spaces, right-to-left', async () => {
    for (const name of ['Café CLI', '\u{1F680} deploy bot', 'svc\u00a0cli', 'עברית', '\u0130'.repeat(64)]) {
      const response = await app.inject({ method: 'POST', url: '/v1/public/auth/device/code', payload: { client_name: name } });
      expect(response.statusCode, `${name}: ${response.body}`).toBe(200);
    }
  });
});

describe('tool names are held to their limit once trimmed and lowercased', () => {
  it('refuses a sandbox operation that outgrows it with 400 request.invalid naming /operation', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/sandbox/guardrails/bootstrap', headers: bearer(tenant.adminKey), payload: { operation: dottedCapitalI.repeat(allowedToolLengthMax), requested_spend_cents: 100 } });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'request.invalid', details: { fields: [{ location: 'body', path: '/operation' }] } });
  });

  it('takes one that fits, stored as normalized, and evidence naming it either way', async () => {
    const operation = ` ${dottedCapitalI.repeat(allowedToolLengthMax / 2 - 1)}\u{1F600}\u{1F600} `;
    const created = await app.inject({ method: 'POST', url: '/v1/sandbox/guardrails/bootstrap', headers: bearer(tenant.adminKey), payload: { operation, requested_spend_cents: 100 } });
    expect(created.statusCode, created.body).toBe(200);
    const intentId = created.json().intent_id as string;
    const intent = await app.inject({ url: `/harbor/intents/${intentId}`, headers: bearer(tenant.adminKey) });
    expect(intent.statusCode, intent.body).toBe(200);
    expect(intent.json().allowed_tools).toEqual([operation.trim().toLowerCase()]);
    const evidence = await app.inject({ method: 'POST', url: `/v1/sandbox/guardrails/${intentId}/evidence`, headers: bearer(tenant.adminKey), payload: { operation: dottedCapitalI.repeat(allowedToolLengthMax), payload: { status: 'completed' } } });
    expect(evidence.statusCode, evidence.body).toBe(400);
    expect(evidence.json().error.details.fields[0].path).toBe('/operation');
  });

  it('refuses to sign or take an intent whose allowed tool outgrows it', async () => {
    expect(() => normalizedAllowedTools(['ok', dottedCapitalI.repeat(allowedToolLengthMax)])).toThrow(SigningError);
    expect(normalizedAllowedTools([` ${'\u{1F600}'.repeat(allowedToolLengthMax)} `])).toEqual(['\u{1F600}'.repeat(allowedToolLengthMax)]);
    const principal = party('did:example:normalized-principal');
    const payee = party('did:example:normalized-payee');
    const valid = signedCreateBody({ tenantId: tenant.tenantId, principal, payee });
    const response = await app.inject({ method: 'POST', url: '/harbor/intents', headers: bearer(tenant.adminKey), payload: { ...valid, allowed_tools: [dottedCapitalI.repeat(allowedToolLengthMax)] } });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'signing.value_invalid', details: { field: 'allowed_tools[0]' } });
  });
});

/** Every code point but the surrogates, one string each. */
function everyCharacter(): string[] {
  const characters: string[] = [];
  for (let codePoint = 1; codePoint <= 0x10ffff; codePoint += 1) {
    if (codePoint < 0xd800 || codePoint > 0xdfff) characters.push(String.fromCodePoint(codePoint));
  }
  return characters;
}

describe('no CHECK refuses what the service takes (every code point, on this Postgres)', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client(database.connection);
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  /** The texts of `texts` that `predicate` (SQL over `$1` elements named `t`) refuses. */
  async function refusedBySql(texts: readonly string[], predicate: string): Promise<string[]> {
    const { rows } = await client.query<{ t: string }>(`SELECT t FROM unnest($1::text[]) AS t WHERE NOT (${predicate})`, [texts]);
    return rows.map((row) => row.t);
  }

  it('users.email: a normalized email the service takes passes the CHECK (lowercase, no space or control)', async () => {
    const emails = everyCharacter().map((character) => normalizeEmail(`a${character}b@x.io`)).filter(isValidEmail);
    expect(emails.length).toBeGreaterThan(1_000_000);
    expect(new RegExp(emailPatternSource, 'u').test('a\u0085b@x.io')).toBe(false);
    const refused = await refusedBySql(emails, "length(t) BETWEEN 3 AND 254 AND t = lower(t) AND t ~ '^[^@[:space:][:cntrl:]]+@[^@[:space:][:cntrl:]]+$'");
    expect(refused.map((email) => [...email].map((character) => `U+${character.codePointAt(0)!.toString(16)}`).join(' '))).toEqual([]);
  });

  it('device_authorizations.client_name: a name the contract takes passes the CHECK', async () => {
    const pattern = new RegExp((DeviceCodeBody.properties.client_name as unknown as { pattern: string }).pattern, 'u');
    const names = everyCharacter().map((character) => `a${character}`).filter((name) => pattern.test(name));
    const refused = await refusedBySql(names, "t !~ '[[:cntrl:]]'");
    expect(refused.map((name) => `U+${name.codePointAt(1)!.toString(16)}`)).toEqual([]);
  });
});
