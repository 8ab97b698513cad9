// Ed25519 on the node:crypto path: RFC 8032 vectors, agreement with @noble/ed25519 on random keys and messages,
// and the strict hex / base64 decoders signing material passes through.
import * as noble from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SigningError } from '../../src/signing/errors.ts';
import {
  base64ToBytes,
  base64UrlOrStandardToBytes,
  ed25519PublicKey,
  ed25519SignerFromSeed,
  hexToBytes,
  verifyEd25519,
} from '../../src/signing/index.ts';
import { rfc8032Vectors } from './rfc8032-vectors.ts';

noble.hashes.sha512 = sha512;
const fromHex = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, 'hex'));
const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

function expectValueInvalid(action: () => unknown, field: string): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SigningError);
  expect((caught as SigningError).code).toBe('signing.value_invalid');
  expect((caught as SigningError).details?.field).toBe(field);
}

describe('RFC 8032 §7.1 through node:crypto', () => {
  it.each(rfc8032Vectors.map((vector) => [vector.name, vector] as const))('%s: key, signature and verify', (_name, vector) => {
    const signer = ed25519SignerFromSeed(fromHex(vector.secretKey));
    const message = fromHex(vector.message);
    expect(signer.publicKey.hex).toBe(vector.publicKey);
    expect(toHex(signer.sign(message))).toBe(vector.signature);
    expect(verifyEd25519(fromHex(vector.publicKey), message, fromHex(vector.signature))).toBe(true);
  });

  it('TEST 1024 carries its 1023-byte message', () => {
    expect(fromHex(rfc8032Vectors.find((vector) => vector.name === 'TEST 1024')!.message)).toHaveLength(1023);
  });

  it('refuses a flipped bit in message, signature (R and S halves) and key', () => {
    const vector = rfc8032Vectors[2]!;
    const message = fromHex(vector.message);
    const signature = fromHex(vector.signature);
    const flip = (bytes: Uint8Array, index: number): Uint8Array => {
      const copy = new Uint8Array(bytes);
      copy[index]! ^= 0x01;
      return copy;
    };
    expect(verifyEd25519(fromHex(vector.publicKey), flip(message, 0), signature)).toBe(false);
    expect(verifyEd25519(fromHex(vector.publicKey), message, flip(signature, 0))).toBe(false);
    expect(verifyEd25519(fromHex(vector.publicKey), message, flip(signature, 40))).toBe(false);
    expect(verifyEd25519(flip(fromHex(vector.publicKey), 0), message, signature)).toBe(false);
    expect(verifyEd25519(fromHex(vector.publicKey), message, signature.subarray(0, 63))).toBe(false);
  });

  it('refuses a non-canonical S (S + L)', () => {
    const vector = rfc8032Vectors[1]!;
    const signature = fromHex(vector.signature);
    const order = 2n ** 252n + 27742317777372353535851937790883648493n;
    const s = BigInt(`0x${toHex(signature.subarray(32).reverse())}`) + order;
    const sBytes = fromHex(s.toString(16).padStart(64, '0')).reverse();
    const malleated = new Uint8Array([...signature.subarray(0, 32), ...sBytes]);
    expect(verifyEd25519(fromHex(vector.publicKey), fromHex(vector.message), malleated)).toBe(false);
  });

  it('takes raw 32-byte keys and seeds only', () => {
    expectValueInvalid(() => ed25519PublicKey(new Uint8Array(31)), 'public_key');
    expectValueInvalid(() => ed25519PublicKey(new Uint8Array(33)), 'public_key');
    expectValueInvalid(() => ed25519SignerFromSeed(new Uint8Array(31)), 'seed');
  });

  it('reuses the key object of a key it has seen', () => {
    const key = fromHex(rfc8032Vectors[0]!.publicKey);
    expect(ed25519PublicKey(key)).toBe(ed25519PublicKey(new Uint8Array(key)));
  });
});

describe('node:crypto and @noble/ed25519 agree', () => {
  const seed = fc.uint8Array({ minLength: 32, maxLength: 32 });
  const message = fc.uint8Array({ maxLength: 512 });

  it('on keys, signatures and verification of random messages', () => {
    fc.assert(
      fc.property(seed, message, (seedBytes, messageBytes) => {
        const signer = ed25519SignerFromSeed(seedBytes);
        const signature = signer.sign(messageBytes);
        expect(toHex(signer.publicKey.bytes)).toBe(toHex(noble.getPublicKey(seedBytes)));
        expect(toHex(signature)).toBe(toHex(noble.sign(messageBytes, seedBytes)));
        expect(verifyEd25519(signer.publicKey, messageBytes, signature)).toBe(true);
        expect(noble.verify(signature, messageBytes, signer.publicKey.bytes)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('on rejecting a corrupted signature', () => {
    fc.assert(
      fc.property(seed, message, fc.nat(63), fc.integer({ min: 1, max: 255 }), (seedBytes, messageBytes, index, mask) => {
        const signer = ed25519SignerFromSeed(seedBytes);
        const signature = signer.sign(messageBytes);
        signature[index]! ^= mask;
        const nodeVerdict = verifyEd25519(signer.publicKey, messageBytes, signature);
        expect(nodeVerdict).toBe(false);
        expect(noble.verify(signature, messageBytes, signer.publicKey.bytes)).toBe(nodeVerdict);
      }),
      { numRuns: 100 },
    );
  });
});

describe('strict decoders', () => {
  it('hex: lowercase, even, exact length', () => {
    expect(hexToBytes('00ff', 'key', 2)).toEqual(new Uint8Array([0, 255]));
    expectValueInvalid(() => hexToBytes('00FF', 'key'), 'key');
    expectValueInvalid(() => hexToBytes('0', 'key'), 'key');
    expectValueInvalid(() => hexToBytes('zz', 'key'), 'key');
    expectValueInvalid(() => hexToBytes('00'.repeat(31), 'key', 32), 'key');
    expectValueInvalid(() => hexToBytes(42, 'key'), 'key');
  });

  it('base64: standard alphabet, padded, canonical, exact length', () => {
    const key = '/RckOFqgx1tk+3jNYC+h2ZH96/drE8WO1wLqyDXp9hg=';
    expect(base64ToBytes(key, 'payee_pubkey', 32)).toHaveLength(32);
    expectValueInvalid(() => base64ToBytes(key.slice(0, -1), 'payee_pubkey', 32), 'payee_pubkey'); // padding missing
    expectValueInvalid(() => base64ToBytes(key.replaceAll('/', '_'), 'payee_pubkey', 32), 'payee_pubkey'); // url alphabet
    expectValueInvalid(() => base64ToBytes('AAAA', 'payee_pubkey', 32), 'payee_pubkey'); // wrong length
    expectValueInvalid(() => base64ToBytes('AB==', 'payee_pubkey'), 'payee_pubkey'); // non-zero padding bits
    expectValueInvalid(() => base64ToBytes('A A=', 'payee_pubkey'), 'payee_pubkey');
  });

  it('base64url: padded or not, standard accepted, alphabets not mixed', () => {
    const bytes = new Uint8Array([0xfb, 0xff, 0x01, 0x02]);
    expect(base64UrlOrStandardToBytes('-_8BAg', 'header')).toEqual(bytes);
    expect(base64UrlOrStandardToBytes('-_8BAg==', 'header')).toEqual(bytes);
    expect(base64UrlOrStandardToBytes('+/8BAg==', 'header')).toEqual(bytes);
    expectValueInvalid(() => base64UrlOrStandardToBytes('-/8BAg', 'header'), 'header');
    expectValueInvalid(() => base64UrlOrStandardToBytes('-_8BAg=', 'header'), 'header');
    expectValueInvalid(() => base64UrlOrStandardToBytes('-_8BA', 'header'), 'header');
    expectValueInvalid(() => base64UrlOrStandardToBytes('not base64!', 'header'), 'header');
  });
});
