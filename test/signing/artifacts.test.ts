// ed25519-sha256-json-v1 artifacts: each kind signed by the module verifies with an independent verifier written
// here (its own field orders from docs/signing.md#signed-artifacts-ed25519-sha256-json-v1, @noble/hashes SHA-256,
// @noble/ed25519), and any one-byte change to a signed field, the digest, the signature or the key fails verification.
import * as noble from '@noble/ed25519';
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { SigningError } from '../../src/signing/errors.ts';
import { canonicalArtifactBytes, ed25519SignerFromSeed, signArtifact, verifyArtifact, type ArtifactKindName } from '../../src/signing/index.ts';

noble.hashes.sha512 = sha512;
const signer = ed25519SignerFromSeed(new Uint8Array(32).fill(0x07));
const otherSigner = ed25519SignerFromSeed(new Uint8Array(32).fill(0x08));

// ---- The independent verifier ----

type Order = readonly (string | readonly [string, Order])[];

const authorizationOrder: Order = ['kind', 'tenant_id', 'principal_subject', 'principal_type'];
const agentOrder: Order = ['subject', 'issuer', 'key_id', 'display_name'];
const mandateTail: Order = [
  ['spend_ceiling', ['amount_minor', 'currency']],
  ['settlement', ['default_rail', 'allowed_rails']],
  ['constraint', ['kind', 'id', 'version', 'digest_sha256_hex', 'uri']],
  'expires_at', 'nonce', 'human_presence_mode',
];
const transportOrder: Order = ['source_protocol', 'partner_platform', 'external_authorization_id', 'request_id'];

const independentOrders: Record<ArtifactKindName, { order: Order; goEscape: boolean; digestField: string; algorithmHashed: boolean }> = {
  'svc.agent_recognition_proof_v1': {
    order: ['schema_version', 'kind', 'key_id', 'signature_algorithm', 'issued_at', 'expires_at', 'nonce', 'purpose',
      ['verifier_context', ['tenant_id', 'verifier_id']], ['request_envelope', ['method', 'path', 'body_digest_sha256_hex']]],
    goEscape: false, digestField: 'message_digest_sha256_hex', algorithmHashed: true,
  },
  'svc.agent_mandate_v1': {
    order: ['schema_version', 'kind', ['authorization', authorizationOrder], ['agent', agentOrder], 'allowed_actions', 'allowed_tools', ...mandateTail],
    goEscape: true, digestField: 'message_digest_sha256_hex', algorithmHashed: false,
  },
  'svc.protocol_authorization_receipt_v1': {
    order: ['schema_version', 'kind', 'receipt_version', 'receipt_id', 'issued_at', 'status', 'intent_id', 'tenant_id', 'verifier_id',
      ['transport_binding', transportOrder], 'mandate_digest_sha256_hex', 'imported_mandate_signing_public_key_ed25519_hex',
      ['authorization', authorizationOrder], ['agent', agentOrder], 'allowed_actions', 'allowed_tools', ...mandateTail],
    goEscape: true, digestField: 'message_digest_sha256_hex', algorithmHashed: false,
  },
  'svc.protocol_settlement_receipt_v1': {
    order: ['schema_version', 'kind', 'receipt_version', 'receipt_id', 'issued_at', 'intent_id', 'tenant_id', 'verifier_id',
      ['transport_binding', transportOrder], 'authorization_receipt_id', 'mandate_digest_sha256_hex', 'harbor_state', 'predicate_passed',
      'settlement_rail', 'settlement_mode', 'principal_did', 'payee_did', 'currency', 'amount_cents', 'terminal_observed_at'],
    goEscape: true, digestField: 'message_digest_sha256_hex', algorithmHashed: false,
  },
  'svc.review_resolution_receipt_v1': {
    order: ['schema_version', 'kind', 'receipt_version', 'receipt_id', 'issued_at', 'intent_id', 'tenant_id', 'verifier_id', 'payee_did',
      'principal_did', 'currency', 'amount_cents', 'held_at', 'signal_codes', 'resolution', 'resolved_by', 'note', 'released_cents',
      'refunded_cents', 'harbor_state', 'settlement_receipt_id', 'ledger_transaction_id', 'resolved_at'],
    goEscape: false, digestField: 'message_digest_sha256_hex', algorithmHashed: false,
  },
  'svc.agent_receipt_v1': {
    order: ['schema_version', 'kind', 'receipt_version', 'scope', 'receipt_id', 'issued_at', 'tenant_id',
      ['authorization', ['principal_did', 'actor_subject',
        ['agent', ['operator_did', 'model_family', 'model_instance_id', 'config_hash_sha256_hex', 'prompt_hash_sha256_hex', 'deployment_epoch']],
        'decision_id', 'audit_id', ['policy', ['template_id', 'version_seq', 'content_digest_sha256_hex', 'spend_policy_version']],
        'authorized_at', 'requested_spend_cents', 'currency', 'reason_codes', 'mandate_digest_sha256_hex', 'mandate_reference_id',
        'zk_policy_proof_digest_sha256_hex']],
      ['execution', ['run_id', 'tool_call_id', 'tool_name', 'operation', 'arguments_digest_sha256_hex', 'result_digest_sha256_hex',
        'outcome', 'started_at', 'completed_at', 'duration_ms', 'tee_attestation_digest_sha256_hex']],
      ['merchant', ['payee_did', 'vendor_id', 'vendor_ref_id']],
      ['evidence', ['completion_preset_id', 'payload_digest_sha256_hex', 'artifacts_digest_sha256_hex', 'predicate_passed', 'payee_did',
        'payee_signature_digest_sha256_hex']],
      ['payment', ['intent_id', 'settlement_rail', 'funding_method', 'funding_reference', 'funding_receipt_digest_sha256_hex']],
      ['outcome', ['harbor_state', 'spend_reservation_outcome', 'predicate_passed', 'settlement_outcome']],
      ['references', ['intent_id', 'ledger_seq', 'settlement_receipt_id']],
      ['external_attestations', ['source', 'kind', 'digest_sha256_hex', 'reference_id']],
      ['continuity', ['prev_message_digest_sha256_hex', 'sequence_number', 'run_id']]],
    goEscape: false, digestField: 'message_digest_sha256_hex', algorithmHashed: false,
  },
  'svc.audit_export_manifest_v1': {
    order: ['schema_version', 'kind', 'tenant_realm_id', 'job_id', 'generated_at_rfc3339', 'gateway_build_version', 'score_model_version',
      'disclosure_tier', 'redaction_profile', 'checkpoint_last_ledger_seq', 'export_filter', 'artifacts'],
    goEscape: false, digestField: 'signed_payload_sha256_hex', algorithmHashed: false,
  },
  'svc.transparency_tree_head_v1': {
    order: ['schema_version', 'kind', 'tenant_id', 'tree_size', 'root_hash', 'issued_at', 'key_id'],
    goEscape: false, digestField: 'message_digest_sha256_hex', algorithmHashed: false,
  },
  // The public client's tree head: kind first, and the algorithm among the hashed fields, last.
  'svc.agent_receipt_transparency_sth_v1': {
    order: ['kind', 'schema_version', 'tenant_id', 'tree_size', 'root_hash_sha256_hex', 'issued_at', 'signing_algorithm'],
    goEscape: false, digestField: 'message_digest_sha256_hex', algorithmHashed: true,
  },
};

function pick(value: unknown, order: Order): unknown {
  if (Array.isArray(value)) return value.map((item) => pick(item, order));
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const entry of order) {
    const [key, nested] = typeof entry === 'string' ? [entry, undefined] : entry;
    if (source[key] !== undefined) out[key] = nested ? pick(source[key], nested) : source[key];
  }
  return out;
}

function goEscape(json: string): string {
  return json.replaceAll('&', '\\u0026').replaceAll('<', '\\u003c').replaceAll('>', '\\u003e')
    .replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029');
}

function independentlyVerifies(wire: Record<string, unknown>): boolean {
  const spec = independentOrders[wire.kind as ArtifactKindName] as (typeof independentOrders)[ArtifactKindName] | undefined;
  if (!spec || wire.schema_version !== 1) return false;
  const json = JSON.stringify(pick(wire, spec.order));
  const bytes = new TextEncoder().encode(spec.goEscape ? goEscape(json) : json);
  const digest = nobleSha256(bytes);
  if (Buffer.from(digest).toString('hex') !== wire[spec.digestField]) return false;
  if (!spec.algorithmHashed && wire.signing_algorithm !== 'ed25519-sha256-json-v1') return false;
  try {
    return noble.verify(Buffer.from(wire.ed25519_signature_hex as string, 'hex'), digest, Buffer.from(wire.signing_public_key_ed25519_hex as string, 'hex'));
  } catch {
    return false;
  }
}

// ---- Sample bodies, one per kind ----

const intentId = '7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401';
const authorization = { kind: 'principal', tenant_id: 'tenant-a', principal_subject: 'user:alice', principal_type: 'user' };
const agent = { subject: 'agent:shopper', issuer: 'https://issuer.example/?a=1&b=<2>', key_id: 'key-1', display_name: 'Shopper\u2028One' };
const mandateCore = {
  spend_ceiling: { amount_minor: 5000, currency: 'usd' },
  settlement: { default_rail: 'x402_usdc_base', allowed_rails: ['stripe_connect', 'x402_usdc_base'] },
  constraint: { kind: 'policy', id: 'completion_v1', version: '3', digest_sha256_hex: 'ab'.repeat(32), uri: '' },
  expires_at: '2030-01-02T15:04:05Z',
  nonce: 'nonce-1',
  human_presence_mode: 'human_not_present',
};

const samples: Record<Exclude<ArtifactKindName, 'svc.agent_recognition_proof_v1'>, Record<string, unknown>> = {
  'svc.agent_mandate_v1': {
    authorization, agent, allowed_actions: ['purchase'], allowed_tools: ['harbor.describe', 'harbor.evidence_submit'], ...mandateCore,
  },
  'svc.protocol_authorization_receipt_v1': {
    receipt_id: 'auth-rcpt-1', issued_at: '2026-11-22T15:04:05Z', status: 'authorized', intent_id: intentId, tenant_id: 'tenant-a',
    verifier_id: 'svc-gateway', transport_binding: { source_protocol: 'ap2', request_id: 'req<1>' },
    mandate_digest_sha256_hex: 'cd'.repeat(32), imported_mandate_signing_public_key_ed25519_hex: otherSigner.publicKey.hex,
    authorization, agent, allowed_actions: [], allowed_tools: ['harbor.describe'], ...mandateCore,
  },
  'svc.protocol_settlement_receipt_v1': {
    receipt_id: intentId, issued_at: '2026-11-22T15:04:05Z', intent_id: intentId, tenant_id: 'tenant-a', verifier_id: 'svc-gateway',
    transport_binding: { source_protocol: 'acp', partner_platform: 'shop & co' }, authorization_receipt_id: 'auth-rcpt-1',
    mandate_digest_sha256_hex: 'cd'.repeat(32), harbor_state: 'refunded', predicate_passed: false, settlement_rail: 'x402_usdc_base',
    settlement_mode: 'simulated', principal_did: 'did:principal:1', payee_did: 'did:payee:1', currency: 'usd', amount_cents: 100,
    terminal_observed_at: '2026-11-22T15:05:00Z',
  },
  'svc.review_resolution_receipt_v1': {
    receipt_id: `review-resolution:${intentId}`, issued_at: '2026-11-22T15:04:05Z', intent_id: intentId, tenant_id: 'tenant-a',
    verifier_id: 'svc-gateway', payee_did: 'did:payee:1', principal_did: 'did:principal:1', currency: 'usd', amount_cents: 250,
    held_at: '2026-11-22T15:00:00Z', signal_codes: ['first_settlement_with_payee', 'amount_over_limit'], resolution: 'refund',
    resolved_by: 'api_key:key_1', note: 'vendor <unknown> & unverified', released_cents: 0, refunded_cents: 250, harbor_state: 'refunded',
    settlement_receipt_id: intentId, ledger_transaction_id: '00000000-0000-4000-8000-000000000002', resolved_at: '2026-11-22T15:04:05Z',
  },
  'svc.agent_receipt_v1': {
    scope: 'intent_terminal', receipt_id: intentId, issued_at: '2026-11-22T15:04:05Z', tenant_id: 'tenant-a',
    authorization: {
      principal_did: 'did:principal:1', actor_subject: 'agent <shopper> & co',
      agent: { operator_did: 'did:operator:1', model_family: 'gpt', config_hash_sha256_hex: '11'.repeat(32), prompt_hash_sha256_hex: '22'.repeat(32) },
      decision_id: '00000000-0000-4000-8000-000000000001', policy: { template_id: 'completion_v1', version_seq: 3, content_digest_sha256_hex: '33'.repeat(32) },
      authorized_at: '2026-11-22T15:00:00Z', requested_spend_cents: 100, currency: 'usd', reason_codes: ['within_budget'],
    },
    outcome: { harbor_state: 'released', predicate_passed: true, settlement_outcome: 'SETTLED' },
    references: { intent_id: intentId, ledger_seq: 42, settlement_receipt_id: null },
    external_attestations: [],
  },
  'svc.audit_export_manifest_v1': {
    tenant_realm_id: 'tenant-a', job_id: 'job_0123', generated_at_rfc3339: '2026-11-22T15:04:05Z', gateway_build_version: '0.1.0',
    disclosure_tier: 'standard', checkpoint_last_ledger_seq: 0, export_filter: { intent_id: intentId, includes: ['disputes'] },
    artifacts: [{ path: 'ledger.jsonl', sha256_hex: '44'.repeat(32), size_bytes: 10 }],
  },
  'svc.agent_receipt_transparency_sth_v1': {
    tenant_id: 'tenant-a', tree_size: 23, root_hash_sha256_hex: '55'.repeat(32), issued_at: '2026-11-22T15:04:05Z',
  },
  'svc.transparency_tree_head_v1': {
    tenant_id: 'tenant-a', tree_size: 23, root_hash: '55'.repeat(32), issued_at: '2026-11-22T15:04:05Z', key_id: 'gk_2026-11-22_0a1b2c3d',
  },
};

function expectCode(action: () => unknown, code: string): SigningError {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SigningError);
  expect((caught as SigningError).code).toBe(code);
  return caught as SigningError;
}

/** Every path to a string, number or boolean leaf of a JSON value. */
function leafPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, index) => leafPaths(item, [...path, index]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => leafPaths(item, [...path, key]));
  return value === null ? [] : [path];
}

function withLeafChanged(wire: Record<string, unknown>, path: (string | number)[]): Record<string, unknown> {
  const copy = structuredClone(wire);
  let parent: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  const value = parent[last];
  if (typeof value === 'boolean') parent[last] = !value;
  else if (typeof value === 'number') parent[last] = value + 1;
  else parent[last] = changeOneCharacter(value as string);
  return copy;
}

/** Changes the last character to a neighbour in the same class, so format checks still pass where they can. */
function changeOneCharacter(text: string): string {
  if (text === '') return 'x';
  const last = text.at(-1)!;
  const replacement = /[0-8a-eA-Y]/.test(last) ? String.fromCharCode(last.charCodeAt(0) + 1) : /[9fZ]/.test(last) ? String.fromCharCode(last.charCodeAt(0) - 1) : 'x';
  return text.slice(0, -1) + replacement;
}

describe('every kind round-trips and verifies independently', () => {
  it.each(Object.entries(samples))('%s', (kind, body) => {
    const wire = signArtifact(kind as ArtifactKindName, body, signer);
    expect(independentlyVerifies(wire)).toBe(true);
    const verified = verifyArtifact(wire);
    expect(verified.kind).toBe(kind);
    expect(verified.signingPublicKeyHex).toBe(signer.publicKey.hex);
    expect(verifyArtifact(JSON.parse(JSON.stringify(wire))).messageDigestHex).toBe(verified.messageDigestHex);
  });

  it.each(Object.entries(samples))('%s: a one-byte change to any signed field fails', (kind, body) => {
    const wire = signArtifact(kind as ArtifactKindName, body, signer);
    const material = new Set(['message_digest_sha256_hex', 'signed_payload_sha256_hex', 'signing_public_key_ed25519_hex', 'ed25519_signature_hex']);
    // The algorithm is a signed field of the kinds that hash it (a proof, the client's tree head).
    if (!independentOrders[kind as ArtifactKindName].algorithmHashed) material.add('signing_algorithm');
    const paths = leafPaths(wire).filter((path) => !material.has(String(path[0])));
    // The smallest kinds, the tree heads, have 7 signed leaves.
    expect(paths.length).toBeGreaterThanOrEqual(7);
    for (const path of paths) {
      const changed = withLeafChanged(wire, path);
      expect(() => verifyArtifact(changed), path.join('.')).toThrow(SigningError);
      expect(independentlyVerifies(changed), path.join('.')).toBe(false);
    }
  });

  it.each(Object.entries(samples))('%s: a one-byte change to digest, signature or key fails', (kind, body) => {
    const wire = signArtifact(kind as ArtifactKindName, body, signer);
    const digestField = independentOrders[kind as ArtifactKindName].digestField;
    for (const field of [digestField, 'ed25519_signature_hex', 'signing_public_key_ed25519_hex']) {
      for (const index of [0, 31, 63]) {
        const text = wire[field] as string;
        const flipped = text.slice(0, index) + (text[index] === '0' ? '1' : '0') + text.slice(index + 1);
        const changed = { ...wire, [field]: flipped };
        expectCode(() => verifyArtifact(changed), 'artifact.signature_invalid');
        expect(independentlyVerifies(changed)).toBe(false);
      }
    }
  });
});

describe('canonical bytes', () => {
  it('Go-escapes mandates and protocol receipts, not agent receipts or manifests', () => {
    const mandate = Buffer.from(canonicalArtifactBytes({ schema_version: 1, kind: 'svc.agent_mandate_v1', ...samples['svc.agent_mandate_v1'] })).toString();
    expect(mandate).toContain('"issuer":"https://issuer.example/?a=1\\u0026b=\\u003c2\\u003e"');
    expect(mandate).toContain('"display_name":"Shopper\\u2028One"');
    const settlement = signArtifact('svc.protocol_settlement_receipt_v1', samples['svc.protocol_settlement_receipt_v1'], signer);
    expect(Buffer.from(canonicalArtifactBytes(stripMaterial(settlement))).toString()).toContain('"partner_platform":"shop \\u0026 co"');
    const receipt = signArtifact('svc.agent_receipt_v1', samples['svc.agent_receipt_v1'], signer);
    expect(Buffer.from(canonicalArtifactBytes(stripMaterial(receipt))).toString()).toContain('"actor_subject":"agent <shopper> & co"');
  });

  it('writes optional fields exactly as §8 says', () => {
    const authorizationReceipt = signArtifact('svc.protocol_authorization_receipt_v1', samples['svc.protocol_authorization_receipt_v1'], signer);
    expect(authorizationReceipt.allowed_actions).toBeNull();
    expect(authorizationReceipt.transport_binding).toEqual({ source_protocol: 'ap2', request_id: 'req<1>' });
    const receipt = signArtifact('svc.agent_receipt_v1', samples['svc.agent_receipt_v1'], signer);
    expect(receipt.external_attestations).toBeNull();
    expect(receipt.references).toEqual({ intent_id: intentId, ledger_seq: 42, settlement_receipt_id: null });
    const settlement = signArtifact('svc.protocol_settlement_receipt_v1', samples['svc.protocol_settlement_receipt_v1'], signer);
    expect(settlement.predicate_passed).toBe(false);
    const manifest = signArtifact('svc.audit_export_manifest_v1', samples['svc.audit_export_manifest_v1'], signer);
    expect(manifest).not.toHaveProperty('checkpoint_last_ledger_seq');
    expect(Object.keys(manifest).slice(0, 4)).toEqual(['schema_version', 'kind', 'tenant_realm_id', 'job_id']);
  });

  it('starts from the fixed order, not sorted keys', () => {
    const bytes = Buffer.from(canonicalArtifactBytes({ schema_version: 1, kind: 'svc.agent_mandate_v1', ...samples['svc.agent_mandate_v1'] })).toString();
    expect(bytes.startsWith('{"schema_version":1,"kind":"svc.agent_mandate_v1","authorization":{"kind":"principal","tenant_id":"tenant-a"')).toBe(true);
  });
});

function stripMaterial(wire: Record<string, unknown>): Record<string, unknown> {
  const { signing_algorithm: _a, message_digest_sha256_hex: _d, signed_payload_sha256_hex: _p, signing_public_key_ed25519_hex: _k, ed25519_signature_hex: _s, ...body } = wire;
  return body;
}

describe('refusals at the boundary', () => {
  const wire = signArtifact('svc.agent_mandate_v1', samples['svc.agent_mandate_v1'], signer);

  it('refuses unknown schema_version, kind and algorithm with their codes', () => {
    expectCode(() => verifyArtifact({ ...wire, schema_version: 2 }), 'artifact.schema_version_unsupported');
    expectCode(() => verifyArtifact({ ...wire, schema_version: '1' }), 'artifact.schema_version_unsupported');
    const { schema_version: _v, ...withoutVersion } = wire;
    expectCode(() => verifyArtifact(withoutVersion), 'artifact.schema_version_unsupported');
    expectCode(() => verifyArtifact({ ...wire, kind: 'svc.agent_mandate_v2' }), 'artifact.kind_unknown');
    expectCode(() => verifyArtifact({ ...wire, signing_algorithm: 'ed25519-sha512-json-v1' }), 'artifact.algorithm_unsupported');
    expectCode(() => signArtifact('svc.unknown_v1' as ArtifactKindName, {}, signer), 'artifact.kind_unknown');
  });

  it('refuses wrong shapes as malformed, naming the field', () => {
    expect(expectCode(() => verifyArtifact([]), 'artifact.malformed').details?.field).toBe('artifact');
    expect(expectCode(() => verifyArtifact({ ...wire, nonce: 7 }), 'artifact.malformed').details?.field).toBe('nonce');
    expect(expectCode(() => verifyArtifact({ ...wire, extra: true }), 'artifact.malformed').details?.field).toBe('extra');
    expect(expectCode(() => verifyArtifact({ ...wire, expires_at: '2030-01-02T15:04:05.5Z' }), 'artifact.malformed').details?.field).toBe('expires_at');
    expect(expectCode(() => verifyArtifact({ ...wire, allowed_tools: ['b', 'a'] }), 'artifact.malformed').details?.field).toBe('allowed_tools');
    expect(expectCode(() => verifyArtifact({ ...wire, spend_ceiling: { amount_minor: 1.5, currency: 'usd' } }), 'artifact.malformed').details?.field).toBe('spend_ceiling.amount_minor');
    expectCode(() => verifyArtifact({ ...wire, ed25519_signature_hex: (wire.ed25519_signature_hex as string).toUpperCase() }), 'artifact.malformed');
    expectCode(() => signArtifact('svc.agent_mandate_v1', { ...samples['svc.agent_mandate_v1'], nonce: 'a\udc00' }, signer), 'artifact.malformed');
  });

  it('checks the signing key against a trusted list when one is given', () => {
    expect(verifyArtifact(wire, { trustedPublicKeys: [signer.publicKey.hex] }).kind).toBe('svc.agent_mandate_v1');
    expect(verifyArtifact(wire, { trustedPublicKeys: [otherSigner.publicKey.bytes, signer.publicKey.bytes] }).kind).toBe('svc.agent_mandate_v1');
    expectCode(() => verifyArtifact(wire, { trustedPublicKeys: [otherSigner.publicKey.hex] }), 'artifact.key_untrusted');
  });

  it('refuses a valid signature by another key over the same digest when the key is swapped', () => {
    const swapped = { ...wire, signing_public_key_ed25519_hex: otherSigner.publicKey.hex };
    expectCode(() => verifyArtifact(swapped), 'artifact.signature_invalid');
  });
});

describe('agent receipt operator attestation', () => {
  const operator = ed25519SignerFromSeed(new Uint8Array(32).fill(0x0b));
  const wire = signArtifact('svc.agent_receipt_v1', samples['svc.agent_receipt_v1'], signer);
  const digest = Buffer.from(wire.message_digest_sha256_hex as string, 'hex');
  const attestation = {
    operator_did: 'did:operator:1',
    signing_public_key_ed25519_hex: operator.publicKey.hex,
    message_digest_sha256_hex: wire.message_digest_sha256_hex,
    ed25519_signature_hex: Buffer.from(operator.sign(digest)).toString('hex'),
  };

  it('verifies the counter-signature over the same digest, outside the signed bytes', () => {
    expect(verifyArtifact({ ...wire, operator_attestation: attestation }).messageDigestHex).toBe(wire.message_digest_sha256_hex);
    expectCode(() => verifyArtifact({ ...wire, operator_attestation: { ...attestation, ed25519_signature_hex: wire.ed25519_signature_hex } }), 'artifact.signature_invalid');
    expectCode(() => verifyArtifact({ ...wire, operator_attestation: { ...attestation, operator_did: 'did:operator:2' } }), 'artifact.malformed');
  });
});
