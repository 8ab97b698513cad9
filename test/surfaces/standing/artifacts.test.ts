// The standing artifacts' signed bytes and offline verification (src/signing/standing-artifacts.ts), without a
// server: the canonical order is the table's whatever order the fields arrive in, the material fields stay out of
// the bytes, and every refusal has its artifact.* code, checked before any signature work where it can be.
import { randomBytes } from 'node:crypto';
import * as noble from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { ed25519SignerFromSeed } from '../../../src/signing/ed25519.ts';
import { signStandingArtifact, standingArtifactBytes, verifyStandingArtifact } from '../../../src/signing/standing-artifacts.ts';

noble.hashes.sha512 = sha512;
const signer = ed25519SignerFromSeed(randomBytes(32));

const window = (fromDay: string | null) => ({
  from_day: fromDay, released_count: 1, refunded_count: 0, expired_count: 0, disputed_count: 0, predicate_evaluated_count: 1,
  predicate_passed_count: 1, predicate_pass_rate_bps: 10000, funding_to_terminal_median_seconds: { at_least: 0, below: 1 },
  amounts: [{ currency: 'usd', released_cents: '250', refunded_cents: '0', expired_cents: '0' }],
});
const metrics = {
  first_activity_at: '2026-11-25T03:00:00Z', last_activity_at: '2026-11-25T03:00:01Z', as_of_day: '2026-11-25',
  all_time: window(null), last_30_days: window('2026-10-27'), last_7_days: window('2026-11-19'),
};
const receiptBody = {
  schema_version: 1, receipt_version: '1', kind: 'svc.signal.operator_receipt', tenant_id: 'acme', operator_did: 'did:payee:<&>é',
  issued_at: '2026-11-25T04:00:00Z', checkpoint_last_ledger_seq: 4, score_version: '1', scoring_model: 'svc.standing.smoothed_release_ratio_v1',
  metrics, score: 666,
};

/** The same object with its keys, at every level, in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, reversed(member)]));
}

describe('standing artifacts', () => {
  it('signs the canonical bytes: compact JSON in the table order, without material; Ed25519 over the SHA-256 digest', async () => {
    const signed = signStandingArtifact(reversed(receiptBody) as Record<string, unknown>, signer);
    const bytes = Buffer.from(standingArtifactBytes(signed));
    expect(bytes.toString('utf8')).toBe(JSON.stringify(receiptBody));
    expect(Object.keys(signed)).toEqual([...Object.keys(receiptBody), 'signing_algorithm', 'message_digest_hex', 'signing_public_key_hex', 'signature_hex']);
    const digest = await crypto.subtle.digest('SHA-256', bytes);
    expect(signed.message_digest_hex).toBe(Buffer.from(digest).toString('hex'));
    expect(noble.verify(Buffer.from(signed.signature_hex as string, 'hex'), new Uint8Array(digest), signer.publicKey.bytes)).toBe(true);
    // Reordered in transit, it still verifies: the verifier rebuilds the order.
    expect(verifyStandingArtifact(reversed(signed), [signer.publicKey.hex]).body).toEqual(receiptBody);
    expect(verifyStandingArtifact({ schema_version: 1, updated_at: 'x', receipt: signed }).kind).toBe('svc.signal.operator_receipt');
  });

  it('refuses with the artifact.* code of the first fault', () => {
    const signed = signStandingArtifact(receiptBody, signer);
    const refusal = (value: unknown, keys: string[] = []) => {
      try {
        verifyStandingArtifact(value, keys);
      } catch (error) {
        return (error as { code: string; details?: { field?: string } }).code + ':' + ((error as { details?: { field?: string } }).details?.field ?? '');
      }
      return 'verified';
    };
    expect(refusal({ ...signed, kind: 'svc.other' })).toBe('artifact.kind_unknown:kind');
    expect(refusal({ ...signed, schema_version: 2 })).toBe('artifact.schema_version_unsupported:schema_version');
    expect(refusal({ ...signed, signing_algorithm: 'ed25519' })).toBe('artifact.algorithm_unsupported:signing_algorithm');
    expect(refusal({ ...signed, signature_hex: 'AB' })).toBe('artifact.malformed:signature_hex');
    expect(refusal(signed, ['11'.repeat(32)])).toBe('artifact.key_untrusted:signing_public_key_hex');
    expect(refusal({ ...signed, score: 0.5 })).toBe('artifact.malformed:score');
    expect(refusal({ ...signed, extra: true })).toBe('artifact.malformed:extra');
    const { metrics: _metrics, ...withoutMetrics } = signed;
    expect(refusal(withoutMetrics)).toBe('artifact.malformed:metrics');
    expect(refusal({ ...signed, score: 667 })).toBe('artifact.signature_invalid:message_digest_hex');
    const otherSigner = ed25519SignerFromSeed(randomBytes(32));
    expect(refusal({ ...signed, signing_public_key_hex: otherSigner.publicKey.hex })).toBe('artifact.signature_invalid:signature_hex');
    expect(refusal(signed, [signer.publicKey.hex])).toBe('verified');
  });
});
