// Standard Webhooks signatures (docs/events.md#signatures): a delivery carries `webhook-id`, `webhook-timestamp` (Unix
// seconds) and `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256>` of `id.timestamp.body` under
// the endpoint's secret (`whsec_` + base64 of the key bytes), and optionally `v1a,<base64 Ed25519>` of the same bytes
// by the gateway's signing key (its public key is in /.well-known/jwks.json). During a secret rotation's overlap a
// delivery carries one `v1,` signature per secret. Pure: the server signs with it, the SDK verifies with it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { verifyEd25519, type Ed25519PublicKey, type Ed25519Signer } from './ed25519.ts';

export const webhookSecretPrefix = 'whsec_';
/** Bytes of a secret this service mints (the standard asks for 24 to 64). */
export const webhookSecretBytes = 32;
/** How far a delivery's timestamp may be from the receiver's clock before it is refused (replay protection). */
export const webhookToleranceSecondsDefault = 5 * 60;

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: 'headers_missing' | 'timestamp_invalid' | 'timestamp_out_of_tolerance' | 'secret_invalid' | 'signature_mismatch',
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** A new signing secret, `whsec_` and 32 random bytes in standard base64. */
export function mintWebhookSecret(): string {
  return webhookSecretPrefix + randomBytes(webhookSecretBytes).toString('base64');
}

/** The HMAC key of a secret: the base64 after `whsec_` (a secret without the prefix is taken as base64 too). */
export function webhookSecretKey(secret: string): Buffer {
  const encoded = secret.startsWith(webhookSecretPrefix) ? secret.slice(webhookSecretPrefix.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new WebhookVerificationError('secret_invalid', 'the webhook secret is not whsec_ followed by base64');
  return Buffer.from(encoded, 'base64');
}

/** The bytes every signature covers: `id.timestamp.body`. */
export function signedContent(id: string, timestampSeconds: number, body: string): Buffer {
  return Buffer.from(`${id}.${timestampSeconds}.${body}`, 'utf8');
}

/** `v1,<base64 HMAC-SHA256>` of the delivery under one secret. */
export function hmacSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', webhookSecretKey(secret)).update(signedContent(id, timestampSeconds, body)).digest('base64')}`;
}

/** `v1a,<base64 Ed25519>` of the delivery by `signer`. */
export function ed25519Signature(signer: Ed25519Signer, id: string, timestampSeconds: number, body: string): string {
  return `v1a,${Buffer.from(signer.sign(signedContent(id, timestampSeconds, body))).toString('base64')}`;
}

/** The three headers of a delivery: one `v1,` signature per secret (the current one first), and `v1a,` when a
 * signer is given. */
export function webhookHeaders(
  delivery: { id: string; timestampSeconds: number; body: string },
  secrets: readonly string[],
  signer?: Ed25519Signer,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const { id, timestampSeconds, body } = delivery;
  const signatures = secrets.map((secret) => hmacSignature(secret, id, timestampSeconds, body));
  if (signer) signatures.push(ed25519Signature(signer, id, timestampSeconds, body));
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}

export interface WebhookVerifyOptions {
  /** The endpoint's secret, or several (during a rotation's overlap the receiver may hold both). */
  readonly secret: string | readonly string[];
  /** The headers as received (names in any case). */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The raw body, exactly as received. */
  readonly body: string;
  readonly toleranceSeconds?: number;
  /** The receiver's clock, Unix seconds; default now. */
  readonly nowSeconds?: number;
  /** Also accept a `v1a,` Ed25519 signature by one of these keys (the gateway's JWKS). */
  readonly ed25519Keys?: readonly (Ed25519PublicKey | Uint8Array)[];
}

const headerOf = (headers: WebhookVerifyOptions['headers'], name: string): string | undefined => {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : (value as string | undefined);
  return undefined;
};

/**
 * Checks a delivery: its timestamp within the tolerance, and at least one of its signatures made by one of the
 * secrets (compared in constant time). Answers the parsed body; throws WebhookVerificationError otherwise.
 */
export function verifyWebhook(options: WebhookVerifyOptions): unknown {
  const id = headerOf(options.headers, 'webhook-id');
  const timestamp = headerOf(options.headers, 'webhook-timestamp');
  const signatureHeader = headerOf(options.headers, 'webhook-signature');
  if (!id || !timestamp || !signatureHeader) throw new WebhookVerificationError('headers_missing', 'webhook-id, webhook-timestamp and webhook-signature are required');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('timestamp_invalid', 'webhook-timestamp is not Unix seconds');
  const timestampSeconds = Number(timestamp);
  const nowSeconds = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? webhookToleranceSecondsDefault;
  if (Math.abs(nowSeconds - timestampSeconds) > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `webhook-timestamp is more than ${tolerance} s from now`);
  }
  const presented = signatureHeader.split(' ').filter((part) => part.length > 0);
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  for (const secret of secrets) {
    const expected = Buffer.from(hmacSignature(secret, id, timestampSeconds, options.body));
    for (const candidate of presented) {
      const bytes = Buffer.from(candidate);
      if (bytes.length === expected.length && timingSafeEqual(bytes, expected)) return JSON.parse(options.body) as unknown;
    }
  }
  if (options.ed25519Keys && options.ed25519Keys.length > 0) {
    const content = signedContent(id, timestampSeconds, options.body);
    for (const candidate of presented.filter((part) => part.startsWith('v1a,'))) {
      const signature = Buffer.from(candidate.slice(4), 'base64');
      if (options.ed25519Keys.some((key) => verifyEd25519(key, content, signature))) return JSON.parse(options.body) as unknown;
    }
  }
  throw new WebhookVerificationError('signature_mismatch', 'no signature of the delivery matches');
}
