// Secrets at rest (docs/rails.md#live-rails): a tenant's facilitator API key and processor secret key are stored
// sealed with AES-256-GCM under the deployment's key (`SVC_SECRETS_KEY`, 32 bytes in base64). The sealed form is
// version byte, 12-byte nonce, ciphertext, 16-byte tag; the additional data binds it to its tenant and field, so a
// sealed value copied to another tenant's row or another column does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const version = 1;
const nonceBytes = 12;
const tagBytes = 16;
const keyBytes = 32;

export class SecretBox {
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    this.#key = key;
  }

  /** The key as configured: standard base64 of exactly 32 bytes. Throws (naming no part of it) otherwise. */
  static fromBase64(text: string): SecretBox {
    const trimmed = text.trim();
    const key = /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
    if (key.length !== keyBytes) throw new Error('SVC_SECRETS_KEY must be 32 bytes in standard base64 (e.g. `openssl rand -base64 32`)');
    return new SecretBox(key);
  }

  /** Seals `plaintext`, bound to `context` (tenant and field). */
  seal(plaintext: string, context: string): Buffer {
    const nonce = randomBytes(nonceBytes);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([version]), nonce, body, cipher.getAuthTag()]);
  }

  /** Opens a sealed value for the same `context`; throws when it was sealed under another key or context, or altered. */
  open(sealed: Buffer, context: string): string {
    if (sealed.length < 1 + nonceBytes + tagBytes || sealed[0] !== version) throw new Error('not a sealed secret of this service');
    const nonce = sealed.subarray(1, 1 + nonceBytes);
    const tag = sealed.subarray(sealed.length - tagBytes);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, nonce);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed.subarray(1 + nonceBytes, sealed.length - tagBytes)), decipher.final()]).toString('utf8');
  }

  /** Never print the key. */
  toJSON(): string {
    return '[SecretBox]';
  }
}

/** The additional data of one tenant's secret field. */
export function secretContext(tenantId: string, field: string): string {
  return `svc-secret:v1:${tenantId}:${field}`;
}
