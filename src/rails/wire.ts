// What both rails share on the wire: reading one credential header, strict base64 / base64url JSON, digests, and
// the RFC 9457 problems a refused credential is answered with (MPP's problem types, paymentauth.org).
import { createHash } from 'node:crypto';
import secureJson from 'secure-json-parse';
import { paymentCredentialHeaderBytesMax } from '../limits.ts';
import type { PaymentProblem } from './types.ts';

export const paymentProblemTypeBase = 'https://paymentauth.org/problems/';

const problemTitles = {
  'malformed-credential': 'Malformed Credential',
  'invalid-challenge': 'Invalid Challenge',
  'verification-failed': 'Verification Failed',
  'payment-insufficient': 'Payment Insufficient',
} as const;

export type PaymentProblemCode = keyof typeof problemTitles;

/** The problem body for a refused credential; the fund route answers it as `application/problem+json`. */
export function paymentProblem(code: PaymentProblemCode, detail: string): PaymentProblem {
  return { type: `${paymentProblemTypeBase}${code}`, title: problemTitles[code], detail };
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export function sha256Hex(text: string): string {
  return sha256(text).toString('hex');
}

export type HeaderRead = { readonly kind: 'absent' } | { readonly kind: 'malformed'; readonly reason: string } | { readonly kind: 'value'; readonly value: string };

/** One credential header, trimmed: repeated headers, empty values and oversized values are malformed. */
export function readOneHeader(headers: Record<string, string | string[] | undefined>, name: string): HeaderRead {
  const raw = headers[name];
  if (raw === undefined) return { kind: 'absent' };
  if (Array.isArray(raw)) {
    if (raw.length === 0) return { kind: 'absent' };
    return { kind: 'malformed', reason: `send one ${name} header, not ${raw.length}` };
  }
  const value = raw.trim();
  if (value.length === 0) return { kind: 'malformed', reason: `the ${name} header is empty` };
  if (Buffer.byteLength(value, 'utf8') > paymentCredentialHeaderBytesMax) {
    return { kind: 'malformed', reason: `the ${name} header is longer than ${paymentCredentialHeaderBytesMax} bytes` };
  }
  return { kind: 'value', value };
}

const standardBase64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const base64UrlPattern = /^[A-Za-z0-9_-]*$/;

/** Standard base64 with its padding, as x402 encodes headers. Undefined when the text is not that. */
export function decodeStandardBase64(text: string): Buffer | undefined {
  if (!standardBase64Pattern.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

/** Base64url without padding, as MPP encodes credentials; trailing `=` padding is tolerated. */
export function decodeBase64Url(text: string): Buffer | undefined {
  const unpadded = text.replace(/={1,2}$/, '');
  if (!base64UrlPattern.test(unpadded) || unpadded.length % 4 === 1) return undefined;
  return Buffer.from(unpadded, 'base64url');
}

export function encodeBase64UrlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** UTF-8 JSON with prototype poisoning refused; undefined when the bytes are not that. */
export function parseJsonBytes(bytes: Buffer): unknown {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }) as unknown;
  } catch {
    return undefined;
  }
}

/** A challenge a rail stored with its funding attempt (IssuedChallenge.stored) as the engine hands it back, read from
 * jsonb: `Stored` is the shape the rail's adapter wrote it in, recognized by the rail's name and an intent id; anything
 * else (another rail's challenge, none) is undefined, which every caller refuses as a challenge it did not issue. */
export function storedChallengeOf<Stored extends { readonly rail: string; readonly intent_id: string }>(
  rail: Stored['rail'],
  stored: Readonly<Record<string, unknown>> | undefined,
): Stored | undefined {
  return stored?.['rail'] === rail && typeof stored['intent_id'] === 'string' ? (stored as Stored) : undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
