// The field order of every protocol artifact kind, pinned to fixed expected bytes (one body per kind, every optional
// field present, in docs/protocol.md's order): a change to the table in src/signing/artifact-kinds.ts that moves,
// renames or drops a field fails here. The same body with its keys shuffled gives the same bytes; the digest and the
// signature (Ed25519 is deterministic) are pinned too, and cross-checked with @noble/ed25519.
import * as noble from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { canonicalArtifactBytes, signArtifact, verifyArtifact } from '../../src/signing/artifacts.ts';
import type { ArtifactKindName } from '../../src/signing/artifact-kinds.ts';
import { ed25519SignerFromSeed } from '../../src/signing/ed25519.ts';
import { fixtures } from './artifact-fixtures.ts';

noble.hashes.sha512 = sha512;
const seed = new Uint8Array(32).fill(1);
const signer = ed25519SignerFromSeed(seed);

const expected: Record<string, { bytes: string; digest: string; signature: string }> = {
  'svc.agent_mandate_v1': {
    bytes:
      '{"schema_version":1,"kind":"svc.agent_mandate_v1","authorization":{"kind":"principal","tenant_id":"acme","principal_subject":"did:principal:alice","principal_type":"user"},"agent":{"subject":"agent-a","issuer":"did:operator:acme","key_id":"agent-a","display_name":"Agent \\u003cA\\u003e \\u0026 co"},"allowed_actions":["harbor.intent.fund"],"allowed_tools":["search.web"],"spend_ceiling":{"amount_minor":1000,"currency":"usd"},"settlement":{"default_rail":"x402_usdc_base","allowed_rails":["processor_mpp","x402_usdc_base"]},"constraint":{"kind":"policy","id":"completion_v1","version":"3","digest_sha256_hex":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc","uri":""},"expires_at":"2026-12-01T00:00:00Z","nonce":"nonce-1","human_presence_mode":"human_not_present"}',
    digest: '3c57bf3fb730ddd4869f237cd9a6e58e22db21b30642597c7a5a00d312a33f2f',
    signature:
      '15cfdf46364016eb877002bb2cdee05cac894796cc9f3324c711492426628a374cba736a02df3039a5b8e86cd2b7ced3b2abc2368a2c7ea35e504b9c2c2cfe0c',
  },
  'svc.protocol_authorization_receipt_v1': {
    bytes:
      '{"schema_version":1,"kind":"svc.protocol_authorization_receipt_v1","receipt_version":"1","receipt_id":"authz:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd","issued_at":"2026-11-25T04:00:00Z","status":"authorized","intent_id":"00000000-0000-4000-8000-000000000001","tenant_id":"acme","verifier_id":"svc-gateway","transport_binding":{"source_protocol":"ap2","partner_platform":"shop","external_authorization_id":"ext-1","request_id":"req-1"},"mandate_digest_sha256_hex":"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd","imported_mandate_signing_public_key_ed25519_hex":"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee","authorization":{"kind":"principal","tenant_id":"acme","principal_subject":"did:principal:alice","principal_type":"user"},"agent":{"subject":"agent-a","issuer":"did:operator:acme","key_id":"agent-a","display_name":"Agent \\u003cA\\u003e \\u0026 co"},"allowed_actions":null,"allowed_tools":["search.web"],"spend_ceiling":{"amount_minor":1000,"currency":"usd"},"settlement":{"default_rail":"x402_usdc_base","allowed_rails":["processor_mpp","x402_usdc_base"]},"constraint":{"kind":"policy","id":"completion_v1","version":"3","digest_sha256_hex":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc","uri":""},"expires_at":"2026-12-01T00:00:00Z","nonce":"nonce-1","human_presence_mode":"human_not_present"}',
    digest: 'e092015cba5cd1d38acd879c9131a9d692ae6e46676bf31e65095039bd94a5b8',
    signature:
      '94aa4da88264c459776716eb4bcd5abc4d20febcc93f624cee7ecedd41384489997485d6d893aeec1d48a1ca17f0b56ae10182f5421a7f877f7fb9203bde8505',
  },
  'svc.protocol_settlement_receipt_v1': {
    bytes:
      '{"schema_version":1,"kind":"svc.protocol_settlement_receipt_v1","receipt_version":"1","receipt_id":"00000000-0000-4000-8000-000000000001","issued_at":"2026-11-25T04:00:00Z","intent_id":"00000000-0000-4000-8000-000000000001","tenant_id":"acme","verifier_id":"svc-gateway","transport_binding":{"source_protocol":"ap2"},"authorization_receipt_id":"authz:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd","mandate_digest_sha256_hex":"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd","harbor_state":"released","predicate_passed":true,"settlement_rail":"x402_usdc_base","settlement_mode":"ledger_escrow","principal_did":"did:principal:alice","payee_did":"did:payee:tools","currency":"usd","amount_cents":500,"terminal_observed_at":"2026-11-25T04:00:00Z"}',
    digest: '83c586eb1584fdc7e48b74983583dc68b1ea912046255ba78fb91e209b7eedf3',
    signature:
      '48bd465296cc56860431ae9b8d3e1b5eba510e61f8999da22c4e5efa3e2cda6faff527e3f846fcf76ae1cd0c400716481aea3d059c9f4647ca36c63c8783910c',
  },
  'svc.agent_receipt_v1': {
    bytes:
      '{"schema_version":1,"kind":"svc.agent_receipt_v1","receipt_version":"1","scope":"action","receipt_id":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","issued_at":"2026-11-25T04:00:00Z","tenant_id":"acme","authorization":{"principal_did":"did:principal:alice","actor_subject":"agent-a","agent":{"operator_did":"did:operator:acme","model_family":"claude","model_instance_id":"i-1","config_hash_sha256_hex":"1111111111111111111111111111111111111111111111111111111111111111","prompt_hash_sha256_hex":"2222222222222222222222222222222222222222222222222222222222222222","deployment_epoch":3},"decision_id":"00000000-0000-4000-8000-000000000002","audit_id":"00000000-0000-4000-8000-000000000003","policy":{"template_id":"completion_v1","version_seq":2,"content_digest_sha256_hex":"3333333333333333333333333333333333333333333333333333333333333333","spend_policy_version":1},"authorized_at":"2026-11-25T03:59:00Z","requested_spend_cents":40,"currency":"usd","reason_codes":["ok"],"mandate_digest_sha256_hex":"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd","mandate_reference_id":"m-1","zk_policy_proof_digest_sha256_hex":"4444444444444444444444444444444444444444444444444444444444444444"},"execution":{"run_id":"00000000-0000-4000-8000-000000000004","tool_call_id":"call-1","tool_name":"search.web","operation":"search.web","arguments_digest_sha256_hex":"5555555555555555555555555555555555555555555555555555555555555555","result_digest_sha256_hex":"6666666666666666666666666666666666666666666666666666666666666666","outcome":"executed","started_at":"2026-11-25T03:59:30Z","completed_at":"2026-11-25T03:59:40Z","duration_ms":10000,"tee_attestation_digest_sha256_hex":"7777777777777777777777777777777777777777777777777777777777777777"},"merchant":{"payee_did":"did:payee:tools","vendor_id":"tools","vendor_ref_id":"v-1"},"evidence":{"completion_preset_id":"sandbox_permissive","payload_digest_sha256_hex":"8888888888888888888888888888888888888888888888888888888888888888","artifacts_digest_sha256_hex":"9999999999999999999999999999999999999999999999999999999999999999","predicate_passed":true,"payee_did":"did:payee:tools","payee_signature_digest_sha256_hex":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},"payment":{"intent_id":"00000000-0000-4000-8000-000000000001","settlement_rail":"x402_usdc_base","funding_method":"x402","funding_reference":"ref-1","funding_receipt_digest_sha256_hex":"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},"outcome":{"harbor_state":"funded","spend_reservation_outcome":"consumed","predicate_passed":true},"references":{"intent_id":"00000000-0000-4000-8000-000000000001","ledger_seq":7,"settlement_receipt_id":null},"external_attestations":[{"source":"tee","kind":"sgx","digest_sha256_hex":"0000000000000000000000000000000000000000000000000000000000000000","reference_id":"r-1"}],"continuity":{"prev_message_digest_sha256_hex":"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee","sequence_number":2,"run_id":"00000000-0000-4000-8000-000000000004"}}',
    digest: '238e88c46063ca4c460f2530b54f9b62a6ec1e5276b416d4d5bd9e2b48c0e206',
    signature:
      '02d4f073fc462e82e8da181a85febe29cb844f93aae9ddcd73947beb790382bce446c9308bd2b8d0f9d3bd67c7214ee2bf6121323df222a2ca9cb327baf9e203',
  },
};

/** The same object with its keys in reverse order, at every level. */
function shuffled(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shuffled);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, shuffled(member)]));
}

describe('artifact field order', () => {
  for (const [kind, pinned] of Object.entries(expected)) {
    it(kind, () => {
      const wire = signArtifact(kind as ArtifactKindName, shuffled(fixtures[kind]) as Record<string, unknown>, signer);
      const { signing_algorithm: algorithm, message_digest_sha256_hex: digest, signing_public_key_ed25519_hex: key, ed25519_signature_hex: signature, ...body } = wire;
      expect(Buffer.from(canonicalArtifactBytes(body)).toString('utf8')).toBe(pinned.bytes);
      expect(algorithm).toBe('ed25519-sha256-json-v1');
      expect(digest).toBe(pinned.digest);
      expect(Buffer.from(sha256(Buffer.from(pinned.bytes, 'utf8'))).toString('hex')).toBe(pinned.digest);
      expect(signature).toBe(pinned.signature);
      expect(noble.verify(Buffer.from(pinned.signature, 'hex'), Buffer.from(pinned.digest, 'hex'), Buffer.from(key as string, 'hex'))).toBe(true);
      expect(verifyArtifact(wire).messageDigestHex).toBe(pinned.digest);
    });
  }

  it('covers every protocol kind', () => {
    expect(Object.keys(expected).sort()).toEqual(Object.keys(fixtures).sort());
  });
});
