// Rail secrets at rest (src/infra/secret-box.ts): AES-256-GCM under SVC_SECRETS_KEY, bound to tenant and field.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseSecretsKey } from '../../src/config.ts';
import { SecretBox, secretContext } from '../../src/infra/secret-box.ts';

const key = randomBytes(32).toString('base64');

describe('SecretBox', () => {
  it('opens what it sealed, for the same tenant and field only', () => {
    const box = SecretBox.fromBase64(key);
    const context = secretContext('acme', 'x402_facilitator_api_key');
    const sealed = box.seal('fac_secret_value', context);
    expect(sealed.toString('latin1')).not.toContain('fac_secret_value');
    expect(box.open(sealed, context)).toBe('fac_secret_value');
    // Two seals of one secret differ (fresh nonce).
    expect(box.seal('fac_secret_value', context).equals(sealed)).toBe(false);
    expect(() => box.open(sealed, secretContext('other', 'x402_facilitator_api_key'))).toThrow();
    expect(() => box.open(sealed, secretContext('acme', 'mpp_processor_secret_key'))).toThrow();
    expect(() => SecretBox.fromBase64(randomBytes(32).toString('base64')).open(sealed, context)).toThrow();
    const altered = Buffer.from(sealed);
    altered[20] = altered[20]! ^ 1;
    expect(() => box.open(altered, context)).toThrow();
  });

  it('needs exactly 32 bytes of base64, and never prints the key', () => {
    expect(() => SecretBox.fromBase64(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => SecretBox.fromBase64('not base64!')).toThrow(/32 bytes/);
    expect(JSON.stringify({ box: SecretBox.fromBase64(key) })).not.toContain(key);
    expect(parseSecretsKey(key)).toBe(key);
    expect(parseSecretsKey(undefined)).toBeUndefined();
    expect(() => parseSecretsKey('c2hvcnQ=')).toThrow(ConfigError);
  });
});
