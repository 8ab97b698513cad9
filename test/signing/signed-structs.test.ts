// The signed structures byte for byte: the public client's golden vectors (v6, v7, v4;
// docs/signing.md#worked-examples), the completion tail, the EvidenceSignV1 golden and its signature, the ledger row
// body and chain, RFC 3339 normalization, and refusals.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SigningError } from '../../src/signing/errors.ts';
import {
  allowedToolsDigest,
  artifactsDigest,
  assertFundableSigningVersion,
  bincodeType as t,
  bytesToBase64,
  ed25519SignerFromSeed,
  encodeBincode,
  encodeCompletionContractSign,
  encodeIntentCreationSign,
  encodeLedgerRowBody,
  evidenceSigningBytes,
  intentCreationSigningBytes,
  jsonDigestBlake3,
  ledgerGenesisRowHash,
  ledgerRowHash,
  normalizeRfc3339,
  parseRfc3339,
  type IntentCreationSign,
  type IntentCreationSigningInput,
  type LedgerRowBody,
} from '../../src/signing/index.ts';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const text = (value: string): string => Buffer.from(value, 'utf8').toString('hex');
/** A short bincode String by hand: one length byte, then UTF-8 (independent of the encoder under test). */
const shortString = (value: string): string => Buffer.from([Buffer.byteLength(value)]).toString('hex') + text(value);

function caught(action: () => unknown): SigningError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SigningError);
    return error as SigningError;
  }
  throw new Error('expected a SigningError, nothing was thrown');
}

function expectValueInvalid(action: () => unknown, field: string): void {
  const error = caught(action);
  expect(error.code).toBe('signing.value_invalid');
  expect(error.details?.field).toBe(field);
}

// ---- Golden vectors of the public client's tests (docs/signing.md#worked-examples) ----
const goldenDigests = {
  budget: 'fe9931de397b3817d06aeeb9877163cea9964adc4609fd0f1d715542a7f9c657',
  schema: '69b254eacefe89c7b9b29305b06ec5983871a03cc20db0b4747905ecdddd7f29',
  predicate: 'c366a1c38aad99370b12e7197e0fe5590e2d20763c9b4550a738313f484757e5',
  tools: '6ba1f5bfb6266e05ed626dd8a1a318e8f9a38272186eb855bf717cede2c5b104',
};
const goldenV6Hex =
  '060d74656e616e742d676f6c64656e107f2a9b1e2f664f4f9c6e8f4b8e85c4010f6469643a7072696e636970616c3a310b6469643a70617965653a31c80375736414323033302d30312d30325431353a30343a30355afe9931de397b3817d06aeeb9877163cea9964adc4609fd0f1d715542a7f9c65769b254eacefe89c7b9b29305b06ec5983871a03cc20db0b4747905ecdddd7f29c366a1c38aad99370b12e7197e0fe5590e2d20763c9b4550a738313f484757e5006ba1f5bfb6266e05ed626dd8a1a318e8f9a38272186eb855bf717cede2c5b1040e7374726970655f636f6e6e6563744242424242424242424242424242424242424242424242424242424242424242';
const payeeKeyHex = '42'.repeat(32);
const railHex = shortString('stripe_connect');
// v7: first byte 07; between the rail and the payee key: "completion_v1", version_seq 3, digest 32×ab.
const goldenV7Hex = `07${goldenV6Hex.slice(2, -64)}${shortString('completion_v1')}03${'ab'.repeat(32)}${payeeKeyHex}`;
// v4 (the Python crate's vector): leading 04, no payee key.
const goldenV4Hex = `04${goldenV6Hex.slice(2, -64)}`;

const goldenInput: IntentCreationSigningInput = {
  signing_version: 6,
  tenant_id: 'tenant-golden',
  intent_id: '7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401',
  principal_did: 'did:principal:1',
  payee_did: 'did:payee:1',
  amount_cents: 100,
  currency: 'usd',
  deadline: '2030-01-02T15:04:05Z',
  budget: { max: 100, a: 1 },
  evidence_schema: { type: 'object' },
  predicate: { version: 1, root: { op: 'true' } },
  predicate_ref: '',
  allowed_tools: ['Harbor.Evidence_Submit', 'harbor.describe'],
  settlement_rail: 'stripe_connect',
  payee_pubkey: new Uint8Array(32).fill(0x42),
};

const goldenSignV6: IntentCreationSign = {
  version: 6,
  tenant_id: 'tenant-golden',
  intent_id: '7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401',
  principal_did: 'did:principal:1',
  payee_did: 'did:payee:1',
  amount_cents: 100,
  currency: 'usd',
  deadline: '2030-01-02T15:04:05Z',
  budget_digest: jsonDigestBlake3({ max: 100, a: 1 }),
  evidence_schema_digest: jsonDigestBlake3({ type: 'object' }),
  predicate_dsl_digest: jsonDigestBlake3({ version: 1, root: { op: 'true' } }),
  predicate_ref: '',
  allowed_tools_digest: allowedToolsDigest(['Harbor.Evidence_Submit', 'harbor.describe']),
  settlement_rail: 'stripe_connect',
  payee_pubkey: new Uint8Array(32).fill(0x42),
};

describe('intent creation goldens of the public client', () => {
  it('reproduces the four BLAKE3 digests', () => {
    expect(hex(jsonDigestBlake3({ max: 100, a: 1 }))).toBe(goldenDigests.budget);
    expect(hex(jsonDigestBlake3({ type: 'object' }))).toBe(goldenDigests.schema);
    expect(hex(jsonDigestBlake3({ version: 1, root: { op: 'true' } }))).toBe(goldenDigests.predicate);
    expect(hex(allowedToolsDigest(['Harbor.Evidence_Submit', 'harbor.describe']))).toBe(goldenDigests.tools);
    // Order, case, spacing and duplicates of the tools do not change the digest.
    expect(hex(allowedToolsDigest([' harbor.describe', 'HARBOR.evidence_submit', 'harbor.describe ']))).toBe(goldenDigests.tools);
  });

  it('reproduces the v6 bytes from the struct and from the body parts', () => {
    expect(hex(encodeIntentCreationSign(goldenSignV6))).toBe(goldenV6Hex);
    expect(hex(intentCreationSigningBytes(goldenInput))).toBe(goldenV6Hex);
  });

  it('reproduces the v7 bytes', () => {
    const policy = { policy_template_id: 'completion_v1', policy_version_seq: 3, policy_content_digest: new Uint8Array(32).fill(0xab) };
    expect(hex(encodeIntentCreationSign({ ...goldenSignV6, version: 7, ...policy }))).toBe(goldenV7Hex);
    expect(hex(intentCreationSigningBytes({ ...goldenInput, signing_version: 7, policy }))).toBe(goldenV7Hex);
  });

  it('encodes v4 and v5 (to recognise and refuse them)', () => {
    const { payee_pubkey: _key, ...v4Fields } = goldenSignV6;
    expect(hex(encodeIntentCreationSign({ ...v4Fields, version: 4 }))).toBe(goldenV4Hex);
    const policy = { policy_template_id: 'completion_v1', policy_version_seq: 3, policy_content_digest: new Uint8Array(32).fill(0xab) };
    expect(hex(encodeIntentCreationSign({ ...v4Fields, version: 5, ...policy }))).toBe(
      `05${goldenV4Hex.slice(2)}${shortString('completion_v1')}03${'ab'.repeat(32)}`,
    );
  });

  it('appends the completion-contract tail (version 2)', () => {
    const contract = {
      completion_preset_id: 'stripe_charge',
      vendor_contract_provider: 'stripe',
      vendor_api_version: '2024-10-28.acacia',
      vendor_schema_digest: new Uint8Array(32).fill(0xed),
      canonical_schema_digest: new Uint8Array(32).fill(0x95),
    };
    const tailHex = `02${shortString('stripe_charge')}${shortString('stripe')}${shortString('2024-10-28.acacia')}${'ed'.repeat(32)}${'95'.repeat(32)}`;
    expect(tailHex.startsWith('020d')).toBe(true);
    expect(hex(encodeCompletionContractSign(contract))).toBe(tailHex);
    expect(hex(intentCreationSigningBytes({ ...goldenInput, completion_contract: contract }))).toBe(goldenV6Hex + tailHex);
  });

  it('signs over a deadline re-written as Rust writes it', () => {
    expect(hex(encodeIntentCreationSign({ ...goldenSignV6, deadline: '2030-01-02T15:04:05+00:00' }))).toBe(goldenV6Hex);
    expect(hex(encodeIntentCreationSign({ ...goldenSignV6, deadline: '2030-01-02t15:04:05.000z' }))).toBe(goldenV6Hex);
  });

  it('accepts an uppercase intent id: the same 16 bytes', () => {
    expect(hex(encodeIntentCreationSign({ ...goldenSignV6, intent_id: goldenSignV6.intent_id.toUpperCase() }))).toBe(goldenV6Hex);
  });
});

describe('EvidenceSignV1 golden of the public client', () => {
  const evidenceHex =
    '020d74656e616e742d676f6c64656e107f2a9b1e2f664f4f9c6e8f4b8e85c4010b6469643a70617965653a31d47eab2c358ed1a44f6b1791354930e903d6656d15ab673c0a5425f1af2d63abaf1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f326214323033302d30312d30325431353a30343a30355a';
  const input = {
    tenant_id: 'tenant-golden',
    intent_id: '7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401',
    payee_did: 'did:payee:1',
    payload: { status: 'completed', cost_cents: 10 },
    artifacts: [],
    submitted_at: '2030-01-02T15:04:05Z',
  };

  it('reproduces the bytes and the empty artifacts digest', () => {
    expect(hex(artifactsDigest([]))).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
    expect(hex(evidenceSigningBytes(input))).toBe(evidenceHex);
  });

  it('reproduces the public key and signature with seed 32×09', () => {
    const signer = ed25519SignerFromSeed(new Uint8Array(32).fill(0x09));
    expect(bytesToBase64(signer.publicKey.bytes)).toBe('/RckOFqgx1tk+3jNYC+h2ZH96/drE8WO1wLqyDXp9hg=');
    expect(bytesToBase64(signer.sign(evidenceSigningBytes(input)))).toBe(
      'HEmBpjccxPpPJIck9neBeMLdqmFiEKnN0IoGKkGboo/2t5egKHsIXHWVjsvkoaImtuveVsM8buyti4TLODPUCw==',
    );
  });

  it('digests artifact hashes in list order', () => {
    const a = 'aa'.repeat(32);
    const b = 'bb'.repeat(32);
    expect(hex(artifactsDigest([a, b]))).not.toBe(hex(artifactsDigest([b, a])));
    expectValueInvalid(() => artifactsDigest(['aa'.repeat(31)]), 'artifacts[0]');
    expectValueInvalid(() => artifactsDigest(['AA'.repeat(32)]), 'artifacts[0]');
  });
});

describe('values refused before encoding', () => {
  it('refuses integers out of range or not integers', () => {
    expectValueInvalid(() => encodeBincode(t.u8, 256), 'value');
    expectValueInvalid(() => encodeBincode(t.u16, 70000), 'value');
    expectValueInvalid(() => encodeBincode(t.u32, 2 ** 32), 'value');
    expectValueInvalid(() => encodeBincode(t.u64, -1), 'value');
    expectValueInvalid(() => encodeBincode(t.u64, -1n), 'value');
    expectValueInvalid(() => encodeBincode(t.u64, 1.5), 'value');
    expectValueInvalid(() => encodeBincode(t.u64, 2 ** 64), 'value');
    expectValueInvalid(() => encodeBincode(t.u64, 2n ** 64n), 'value');
    expectValueInvalid(() => encodeBincode(t.i8, 128), 'value');
    expectValueInvalid(() => encodeBincode(t.i64, 2n ** 63n), 'value');
    expectValueInvalid(() => encodeBincode(t.i64, -(2n ** 63n) - 1n), 'value');
    expectValueInvalid(() => encodeBincode(t.i64, '100'), 'value');
    expectValueInvalid(() => encodeBincode(t.u32, Number.NaN), 'value');
    // A number past 2^53 may already be rounded: it must come as a bigint.
    expectValueInvalid(() => encodeBincode(t.u64, 9007199254740993), 'value');
    expect(hex(encodeBincode(t.u64, 9007199254740993n))).toBe('fd0100000000002000');
  });

  it('refuses other malformed values', () => {
    expectValueInvalid(() => encodeBincode(t.bool, 1), 'value');
    expectValueInvalid(() => encodeBincode(t.char, 'ab'), 'value');
    expectValueInvalid(() => encodeBincode(t.string, 'a\ud800'), 'value');
    expectValueInvalid(() => encodeBincode(t.f32, 0.1), 'value');
    expectValueInvalid(() => encodeBincode(t.unit, undefined), 'value');
    expectValueInvalid(() => encodeBincode(t.fixedBytes(32), new Uint8Array(31)), 'value');
    expectValueInvalid(() => encodeBincode(t.fixedBytes(32), new Uint8Array(33)), 'value');
    expectValueInvalid(() => encodeBincode(t.fixedBytes(32), 'ab'.repeat(32)), 'value');
    expectValueInvalid(() => encodeBincode(t.array(t.u16, 3), [1, 2]), 'value');
    expectValueInvalid(() => encodeBincode(t.result(t.u32, t.string), { variant: 'Maybe' }), 'value');
    const sample = t.struct([['a', t.u8], ['b', t.option(t.string)]]);
    expectValueInvalid(() => encodeBincode(sample, { a: 1 }), 'b');
    expectValueInvalid(() => encodeBincode(sample, { a: 1, b: null, c: 2 }), 'c');
    expectValueInvalid(() => encodeBincode(t.struct([['inner', sample]]), { inner: { a: 300, b: null } }), 'inner.a');
  });

  it('refuses bad intent fields, naming the field', () => {
    const encode = (patch: Record<string, unknown>) => () => encodeIntentCreationSign({ ...goldenSignV6, ...patch } as IntentCreationSign);
    expectValueInvalid(encode({ amount_cents: 1.5 }), 'amount_cents');
    expectValueInvalid(encode({ amount_cents: 2n ** 63n }), 'amount_cents');
    expectValueInvalid(encode({ amount_cents: 2 ** 63 }), 'amount_cents');
    expectValueInvalid(encode({ intent_id: 'intent_01J9Z8K3QX' }), 'intent_id');
    expectValueInvalid(encode({ intent_id: 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa' }), 'intent_id');
    expectValueInvalid(encode({ intent_id: '00000000-0000-0000-0000-000000000000' }), 'intent_id');
    expectValueInvalid(encode({ intent_id: '7f2a9b1e2f664f4f9c6e8f4b8e85c401' }), 'intent_id');
    expectValueInvalid(encode({ payee_pubkey: new Uint8Array(31) }), 'payee_pubkey');
    expectValueInvalid(encode({ budget_digest: goldenDigests.budget }), 'budget_digest');
    expectValueInvalid(encode({ deadline: '2030-02-30T00:00:00Z' }), 'deadline');
    expectValueInvalid(encode({ predicate_ref: undefined }), 'predicate_ref');
    expectValueInvalid(encode({ policy_template_id: 'completion_v1' }), 'policy_template_id');
    const policy = { policy_template_id: 'x', policy_content_digest: new Uint8Array(32) };
    expectValueInvalid(encode({ version: 7, ...policy, policy_version_seq: -1 }), 'policy_version_seq');
    expectValueInvalid(encode({ version: 7, ...policy, policy_version_seq: 2 ** 32 }), 'policy_version_seq');
    expectValueInvalid(() => intentCreationSigningBytes({ ...goldenInput, budget: { when: new Date(0) } }), 'budget');
    expectValueInvalid(() => intentCreationSigningBytes({ ...goldenInput, allowed_tools: ['ok', 7] }), 'allowed_tools[1]');
  });

  it('accepts the extremes of i64 as bigints', () => {
    expect(() => encodeIntentCreationSign({ ...goldenSignV6, amount_cents: 2n ** 63n - 1n })).not.toThrow();
  });

  it('judges the signing version before anything else', () => {
    expect(caught(() => encodeIntentCreationSign({ ...goldenSignV6, version: 8 } as unknown as IntentCreationSign)).code).toBe(
      'signing.version_unsupported',
    );
    expect(caught(() => intentCreationSigningBytes({ ...goldenInput, signing_version: 3, intent_id: 'bad' })).code).toBe(
      'signing.version_unsupported',
    );
    expect(caught(() => assertFundableSigningVersion(4)).code).toBe('signing.version_deprecated');
    expect(caught(() => assertFundableSigningVersion(5)).code).toBe('signing.version_deprecated');
    expect(caught(() => assertFundableSigningVersion('6')).code).toBe('signing.version_unsupported');
    expect(() => assertFundableSigningVersion(6)).not.toThrow();
    expect(() => assertFundableSigningVersion(7)).not.toThrow();
  });
});

describe('RFC 3339 as Rust time::serde::rfc3339 re-writes it', () => {
  it.each([
    ['2030-01-02T15:04:05Z', '2030-01-02T15:04:05Z'],
    ['2030-01-02T15:04:05+00:00', '2030-01-02T15:04:05Z'],
    ['2030-01-02T15:04:05-00:00', '2030-01-02T15:04:05Z'],
    ['2030-01-02T17:04:05+02:00', '2030-01-02T17:04:05+02:00'],
    ['2030-01-02T10:34:05-04:30', '2030-01-02T10:34:05-04:30'],
    ['2030-01-02t15:04:05z', '2030-01-02T15:04:05Z'],
    ['2030-01-02 15:04:05Z', '2030-01-02T15:04:05Z'],
    ['2030-01-02T15:04:05.000Z', '2030-01-02T15:04:05Z'],
    ['2030-01-02T15:04:05.500Z', '2030-01-02T15:04:05.5Z'],
    ['2030-01-02T15:04:05.120+01:00', '2030-01-02T15:04:05.12+01:00'],
    ['2030-01-02T15:04:05.000000001Z', '2030-01-02T15:04:05.000000001Z'],
    ['2030-01-02T15:04:05.1234567899Z', '2030-01-02T15:04:05.123456789Z'],
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999999999Z'],
    ['2016-12-31T22:59:60.5-01:00', '2016-12-31T22:59:59.999999999-01:00'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00Z'],
  ])('%s → %s', (input, normalized) => {
    expect(normalizeRfc3339(input, 'deadline')).toBe(normalized);
  });

  it.each([
    '2030-01-02T15:04:60Z',
    '2030-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2030-13-01T00:00:00Z',
    '2030-00-01T00:00:00Z',
    '2030-01-02T24:00:00Z',
    '2030-01-02T15:04:05',
    '2030-01-02T15:04:05+24:00',
    '2030-01-02T15:04:05+02:60',
    '2030-01-02T15:04:05+0200',
    '2030-01-02T15:04Z',
    '2030-01-02T15:04:05.Z',
    '2030-01-02X15:04:05Z',
    '30-01-02T15:04:05Z',
    '+2030-01-02T15:04:05Z',
    ' 2030-01-02T15:04:05Z',
    'not a time',
  ])('refuses %s', (input) => {
    expectValueInvalid(() => normalizeRfc3339(input, 'deadline'), 'deadline');
  });

  it('gives the instant too', () => {
    expect(parseRfc3339('2030-01-02T17:04:05.123456+02:00', 'deadline').epochMs).toBe(Date.UTC(2030, 0, 2, 15, 4, 5, 123));
    expect(parseRfc3339('0001-01-01T00:00:00Z', 'deadline').epochMs).toBe(-62135596800000);
  });
});

describe('ledger row body v2 and its chain', () => {
  const row: LedgerRowBody = {
    tenant_id: 'tenant-a',
    ledger_seq: 1,
    transaction_id: '00000000-0000-4000-8000-000000000001',
    intent_id: '7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401',
    entry_index: 0,
    account: 'escrow:7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401',
    side: 1,
    amount_cents: 100,
    currency: 'usd',
    event_kind: 'fund',
    recorded_at: '2026-11-22T15:04:05.123Z',
  };
  const expectedHex =
    `02${shortString('tenant-a')}01` + // format_version, tenant_id, ledger_seq 1
    `10${'00000000000040008000000000000001'}` + // transaction_id: varint 16 + 16 bytes
    `10${'7f2a9b1e2f664f4f9c6e8f4b8e85c401'}` + // intent_id
    `00${shortString('escrow:7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401')}` + // entry_index 0, account
    `01c8${shortString('usd')}${shortString('fund')}` + // side credit, amount 100 (zigzag 200), currency, event_kind
    shortString('2026-11-22T15:04:05.123Z');

  it('encodes the fields in their order', () => {
    expect(hex(encodeLedgerRowBody(row))).toBe(expectedHex);
    expect(hex(encodeLedgerRowBody({ ...row, ledger_seq: 2n ** 64n - 1n }))).toContain('fdffffffffffffffff');
  });

  it('chains SHA-256(prev ‖ body) from 32 zero bytes', () => {
    const first = encodeLedgerRowBody(row);
    const second = encodeLedgerRowBody({ ...row, ledger_seq: 2, entry_index: 1, side: 0, account: 'funding:x402_usdc_base' });
    const firstHash = ledgerRowHash(ledgerGenesisRowHash, first);
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    expect(hex(ledgerGenesisRowHash)).toBe('00'.repeat(32));
    expect(hex(firstHash)).toBe(sha(Buffer.concat([Buffer.alloc(32), first])));
    expect(hex(ledgerRowHash(firstHash, second))).toBe(sha(Buffer.concat([Buffer.from(firstHash), second])));
    expect(hex(ledgerRowHash(firstHash, second))).not.toBe(hex(ledgerRowHash(ledgerGenesisRowHash, second)));
  });

  it('refuses rows the chain must never hold', () => {
    expectValueInvalid(() => encodeLedgerRowBody({ ...row, amount_cents: 0 }), 'amount_cents');
    expectValueInvalid(() => encodeLedgerRowBody({ ...row, amount_cents: -5 }), 'amount_cents');
    expectValueInvalid(() => encodeLedgerRowBody({ ...row, amount_cents: 2n ** 63n }), 'amount_cents');
    expectValueInvalid(() => encodeLedgerRowBody({ ...row, side: 2 as 0 }), 'side');
    expectValueInvalid(() => encodeLedgerRowBody({ ...row, ledger_seq: -1 }), 'ledger_seq');
    expectValueInvalid(() => encodeLedgerRowBody({ ...row, recorded_at: '2026-11-22T15:04:05Z' }), 'recorded_at');
    expectValueInvalid(() => encodeLedgerRowBody({ ...row, transaction_id: 'txn_1' }), 'transaction_id');
    expectValueInvalid(() => encodeLedgerRowBody({ ...row, account: '' }), 'account');
    expectValueInvalid(() => ledgerRowHash(new Uint8Array(31), new Uint8Array(1)), 'prev_row_hash');
  });
});
