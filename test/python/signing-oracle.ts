// The TypeScript side of the Python SDK's byte-for-byte cross-check: reads cases as JSON on stdin, answers the bytes
// the TypeScript signing core produces for each (hex) on stdout. Run by python/tests/test_cross_check.py.
import { readFileSync } from 'node:fs';
import { artifactKinds } from '../../src/signing/artifact-kinds.ts';
import {
  base64ToBytes,
  blake3Digest,
  bytesToHex,
  canonicalJson,
  createRecognitionProof,
  signArtifact,
  type ArtifactKindName,
  ed25519SignerFromSeed,
  evidenceSigningBytes,
  hexToBytes,
  intentCreationSigningBytes,
} from '../../src/signing/index.ts';

interface Case {
  readonly kind: 'blake3' | 'canonical_json' | 'intent' | 'evidence' | 'recognition' | 'artifact' | 'artifact_kinds';
  readonly input: Record<string, unknown>;
}

function answer(testCase: Case): Record<string, string> {
  const input = testCase.input;
  switch (testCase.kind) {
    case 'blake3':
      return { hex: bytesToHex(blake3Digest(hexToBytes(input['data_hex'], 'data'))) };
    case 'canonical_json':
      return { text: canonicalJson(input['value']) };
    case 'intent': {
      const policy = input['policy'] as Record<string, unknown> | undefined;
      const bytes = intentCreationSigningBytes({
        ...(input as Record<string, unknown>),
        payee_pubkey: base64ToBytes(input['payee_pubkey'], 'payee_pubkey', 32),
        ...(policy ? { policy: { ...policy, policy_content_digest: hexToBytes(policy['policy_content_digest'], 'digest', 32) } } : {}),
      } as never);
      return signed(bytes, input['seed_hex'] as string);
    }
    case 'evidence':
      return signed(evidenceSigningBytes(input as never), input['seed_hex'] as string);
    case 'artifact': {
      const signer = ed25519SignerFromSeed(hexToBytes(input['seed_hex'], 'seed', 32));
      return { wire: JSON.stringify(signArtifact(input['kind'] as ArtifactKindName, input['body'] as Record<string, unknown>, signer)) };
    }
    case 'artifact_kinds':
      return { table: JSON.stringify([...artifactKinds.values()]) };
    case 'recognition': {
      const { headerValue } = createRecognitionProof({
        signer: ed25519SignerFromSeed(hexToBytes(input['seed_hex'], 'seed', 32)),
        keyId: input['key_id'] as string,
        purpose: input['purpose'] as string,
        tenantId: input['tenant_id'] as string,
        method: 'POST',
        path: input['path'] as string,
        body: input['body'] as string,
        nowMs: (input['now_seconds'] as number) * 1000,
        nonce: input['nonce'] as string,
      });
      return { header: headerValue };
    }
  }
}

function signed(bytes: Uint8Array, seedHex: string): Record<string, string> {
  const signer = ed25519SignerFromSeed(hexToBytes(seedHex, 'seed', 32));
  return { hex: bytesToHex(bytes), signature_hex: bytesToHex(signer.sign(bytes)) };
}

const cases = JSON.parse(readFileSync(0, 'utf8')) as Case[];
process.stdout.write(JSON.stringify(cases.map((testCase) => answer(testCase))));
