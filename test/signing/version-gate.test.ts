// An unknown schema_version (artifacts and recognition proofs) or signing version is refused before any hashing or
// Ed25519 work: SHA-256 and the Ed25519 verify function are wrapped in counters and must not be called.
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../../src/signing/ed25519.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/signing/ed25519.ts')>();
  return { ...actual, verifyEd25519: vi.fn(actual.verifyEd25519) };
});
vi.mock('../../src/signing/digests.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/signing/digests.ts')>();
  return { ...actual, sha256: vi.fn(actual.sha256), sha256Hex: vi.fn(actual.sha256Hex), jsonDigestBlake3: vi.fn(actual.jsonDigestBlake3) };
});

const { SigningError } = await import('../../src/signing/errors.ts');
const digests = await import('../../src/signing/digests.ts');
const ed25519 = await import('../../src/signing/ed25519.ts');
const { createRecognitionProof, ed25519SignerFromSeed, intentCreationSigningBytes, signArtifact, verifyArtifact, verifyRecognitionProof } =
  await import('../../src/signing/index.ts');

const signer = ed25519SignerFromSeed(new Uint8Array(32).fill(0x05));
const counted = [ed25519.verifyEd25519, digests.sha256, digests.sha256Hex, digests.jsonDigestBlake3] as unknown as ReturnType<typeof vi.fn>[];
const callCount = (): number => counted.reduce((sum, spy) => sum + spy.mock.calls.length, 0);

function codeOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SigningError);
    return (error as InstanceType<typeof SigningError>).code;
  }
  return 'nothing thrown';
}

const manifest = signArtifact(
  'svc.audit_export_manifest_v1',
  { tenant_realm_id: 'tenant-a', job_id: 'job_1', generated_at_rfc3339: '2026-11-22T15:04:05Z', disclosure_tier: 'standard', artifacts: [] },
  signer,
);
const nowMs = Date.UTC(2026, 10, 22, 15, 4, 5);
const body = new TextEncoder().encode('{}');
const { proof } = createRecognitionProof({
  signer, keyId: 'agent-key-1', purpose: 'harbor.intent.fund', tenantId: 'tenant-a', method: 'POST',
  path: '/harbor/intents/7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401/fund', body, nowMs,
});
const expectations = {
  purpose: 'harbor.intent.fund', method: 'POST', path: '/harbor/intents/7f2a9b1e-2f66-4f4f-9c6e-8f4b8e85c401/fund',
  bodyBytes: body, tenantId: 'tenant-a', nowMs, publicKey: signer.publicKey,
};

beforeEach(() => {
  for (const spy of counted) spy.mockClear();
});

describe('versions are judged before any signature work', () => {
  it('counts the work of a valid verification (the counters work)', () => {
    verifyArtifact(manifest);
    expect(vi.mocked(ed25519.verifyEd25519)).toHaveBeenCalledTimes(1);
    expect(vi.mocked(digests.sha256)).toHaveBeenCalledTimes(1);
    verifyRecognitionProof(proof, expectations);
    expect(vi.mocked(ed25519.verifyEd25519)).toHaveBeenCalledTimes(2);
  });

  it('refuses an unknown artifact schema_version without hashing or Ed25519', () => {
    for (const schemaVersion of [0, 2, 999, '1', null]) {
      expect(codeOf(() => verifyArtifact({ ...manifest, schema_version: schemaVersion }))).toBe('artifact.schema_version_unsupported');
    }
    expect(codeOf(() => verifyArtifact({ ...manifest, kind: 'svc.audit_export_manifest_v2' }))).toBe('artifact.kind_unknown');
    expect(codeOf(() => verifyArtifact({ ...manifest, signing_algorithm: 'none' }))).toBe('artifact.algorithm_unsupported');
    expect(callCount()).toBe(0);
  });

  it('refuses an unknown recognition-proof schema_version, kind or algorithm without hashing or Ed25519', () => {
    expect(codeOf(() => verifyRecognitionProof({ ...proof, schema_version: 2 }, expectations))).toBe('artifact.schema_version_unsupported');
    expect(codeOf(() => verifyRecognitionProof({ ...proof, kind: 'svc.agent_recognition_proof_v2' }, expectations))).toBe('recognition.unsupported');
    expect(codeOf(() => verifyRecognitionProof({ ...proof, signature_algorithm: 'ed448' }, expectations))).toBe('recognition.unsupported');
    expect(callCount()).toBe(0);
  });

  it('refuses an unknown intent signing version before any digest', () => {
    expect(codeOf(() => intentCreationSigningBytes({ signing_version: 9 } as never))).toBe('signing.version_unsupported');
    expect(callCount()).toBe(0);
  });
});
