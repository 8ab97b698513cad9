// Signing-core throughput: building the v6 intent-creation signing bytes (four BLAKE3 digests + bincode) and
// verifying the principal's Ed25519 signature, through node:crypto (the server path) against @noble/ed25519.
import * as noble from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import {
  base64ToBytes,
  bytesToBase64,
  ed25519PublicKey,
  ed25519SignerFromSeed,
  intentCreationSigningBytes,
  verifyEd25519,
  type IntentCreationSigningInput,
} from '../src/signing/index.ts';
import type { BenchRow } from './bench-row.ts';

noble.hashes.sha512 = sha512;

const rounds = 5;
const roundMs = 250;

const principal = ed25519SignerFromSeed(new Uint8Array(32).fill(0x31));
// A create body as the client sends it (docs/engine.md#creating-an-intent--post-harborintents), with a realistic schema
// and predicate.
const createBody = {
  intent_id: '7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401',
  principal_did: 'did:principal:acme',
  principal_pubkey: bytesToBase64(principal.publicKey.bytes),
  payee_did: 'did:payee:vendor',
  payee_pubkey: bytesToBase64(new Uint8Array(32).fill(0x42)),
  budget: { currency: 'usd', max: 2500, max_spend_usd: 25 },
  currency: 'usd',
  amount_cents: 2500,
  evidence_schema: {
    type: 'object',
    required: ['status', 'cost_cents'],
    properties: { status: { type: 'string' }, cost_cents: { type: 'integer' }, vendor_ref_id: { type: 'string' } },
  },
  deadline: '2030-01-02T15:04:05Z',
  predicate_dsl: {
    version: 1,
    root: { op: 'and', clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }] },
  },
  settlement_rail: 'x402_usdc_base',
  signing_version: 6,
  allowed_tools: ['harbor.describe', 'Harbor.Evidence_Submit', 'vendor.search'],
};

function signingInput(): IntentCreationSigningInput {
  return {
    signing_version: createBody.signing_version,
    tenant_id: 'tenant-acme',
    intent_id: createBody.intent_id,
    principal_did: createBody.principal_did,
    payee_did: createBody.payee_did,
    amount_cents: createBody.amount_cents,
    currency: createBody.currency,
    deadline: createBody.deadline,
    budget: createBody.budget,
    evidence_schema: createBody.evidence_schema,
    predicate: createBody.predicate_dsl,
    predicate_ref: '',
    allowed_tools: createBody.allowed_tools,
    settlement_rail: createBody.settlement_rail,
    payee_pubkey: base64ToBytes(createBody.payee_pubkey, 'payee_pubkey', 32),
  };
}

const signatureBase64 = bytesToBase64(principal.sign(intentCreationSigningBytes(signingInput())));

/** What the engine does per create request, up to the signature verdict. */
function verifyCreateWithNode(): boolean {
  const publicKey = ed25519PublicKey(base64ToBytes(createBody.principal_pubkey, 'principal_pubkey', 32));
  const signature = base64ToBytes(signatureBase64, 'principal_signature', 64);
  return verifyEd25519(publicKey, intentCreationSigningBytes(signingInput()), signature);
}

function verifyCreateWithNoble(): boolean {
  const publicKey = base64ToBytes(createBody.principal_pubkey, 'principal_pubkey', 32);
  const signature = base64ToBytes(signatureBase64, 'principal_signature', 64);
  return noble.verify(signature, intentCreationSigningBytes(signingInput()), publicKey);
}

const message = intentCreationSigningBytes(signingInput());
const signature = principal.sign(message);
const verifyOnlyWithNode = (): boolean => verifyEd25519(principal.publicKey, message, signature);
const verifyOnlyWithNoble = (): boolean => noble.verify(signature, message, principal.publicKey.bytes);

/** Operations per second of `operation` over one round of `roundMs`. */
function opsPerSecond(operation: () => boolean): number {
  let count = 0;
  const startedAt = performance.now();
  let elapsed = 0;
  while (elapsed < roundMs) {
    for (let i = 0; i < 16; i++) {
      if (!operation()) throw new Error('signature did not verify: the bench measures nothing');
      count++;
    }
    elapsed = performance.now() - startedAt;
  }
  return (count * 1000) / elapsed;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function describeRate(values: number[]): string {
  const middle = median(values);
  const spread = ((Math.max(...values) - Math.min(...values)) / middle) * 100;
  return `${Math.round(middle).toLocaleString('en-US')} ops/s (median of ${values.length}, spread ${spread.toFixed(0)}%)`;
}

/** Interleaves the two paths round by round so drift of a shared machine hits both alike. */
function compare(entry: string, nodeOperation: () => boolean, nobleOperation: () => boolean): BenchRow {
  const nodeRates: number[] = [];
  const nobleRates: number[] = [];
  opsPerSecond(nodeOperation); // warm-up rounds, discarded
  opsPerSecond(nobleOperation);
  for (let round = 0; round < rounds; round++) {
    nodeRates.push(opsPerSecond(nodeOperation));
    nobleRates.push(opsPerSecond(nobleOperation));
  }
  const ratio = median(nodeRates) / median(nobleRates);
  return {
    entry,
    figure: `node:crypto ${describeRate(nodeRates)}`,
    baseline: `@noble/ed25519 ${describeRate(nobleRates)}`,
    ratio: Number(ratio.toFixed(2)),
    target: 'node:crypto >= noble (ratio >= 1)',
    met: ratio >= 1,
  };
}

/** The signing-bytes build alone: no baseline exists in the run, so the figure is recorded without a target. */
function buildOnly(): BenchRow {
  const rates: number[] = [];
  const build = (): boolean => intentCreationSigningBytes(signingInput()).length > 0;
  opsPerSecond(build); // warm-up round, discarded: the first round measures the JIT more than the code
  for (let round = 0; round < rounds; round++) rates.push(opsPerSecond(build));
  return {
    entry: 'intent create: v6 signing bytes alone (4 BLAKE3 digests + bincode)',
    figure: describeRate(rates),
    baseline: 'none (recorded)',
    ratio: null,
    target: 'recorded',
    met: true,
  };
}

export async function run(): Promise<BenchRow[]> {
  return [
    buildOnly(),
    compare('intent create: v6 signing bytes (4 BLAKE3 digests + bincode) + Ed25519 verify', verifyCreateWithNode, verifyCreateWithNoble),
    compare('Ed25519 verify only (design estimate ~14x)', verifyOnlyWithNode, verifyOnlyWithNoble),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await run();
  for (const row of rows) {
    const verdict = row.ratio === null ? row.target : `${row.ratio} (target ${row.target}: ${row.met ? 'met' : 'NOT met'})`;
    console.log(`${row.entry}\n  figure:   ${row.figure}\n  baseline: ${row.baseline}\n  ratio:    ${verdict}`);
  }
}
