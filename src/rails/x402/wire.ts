// The x402 rail's wire facts a client shares with the server (docs/rails.md#x402-x402_usdc_base): its name, its
// headers, the sandbox's test payers, and a builder of sandbox credentials from a 402's `PAYMENT-REQUIRED`, for
// tests, the SDK and its examples. Pure (node:crypto only): the SDK imports it.
import { randomBytes } from 'node:crypto';
import { RailChallengeMissingError, type RailClientWire } from '../wire-facts.ts';

export const x402RailName = 'x402_usdc_base';

export const x402ChallengeHeaderName = 'PAYMENT-REQUIRED';
export const x402CredentialHeaderName = 'payment-signature';
export const x402ResponseHeaderName = 'PAYMENT-RESPONSE';

/** Sandbox payer addresses with a fixed outcome (docs/rails.md). Any other well-formed address succeeds. */
export const sandboxX402Payers = {
  success: '0x0000000000000000000000000000000000000001',
  decline: '0x0000000000000000000000000000000000000002',
  pending: '0x0000000000000000000000000000000000000003',
} as const;

export interface SandboxX402Options {
  /** The payer: `0x…0002` declines, `0x…0003` stays pending until the next poll, any other address succeeds. */
  readonly from: string;
  /** Defaults to the requirement's payTo. */
  readonly to?: string;
  /** Base units; defaults to the requirement's amount. */
  readonly value?: string;
  /** EIP-3009 nonce (0x + 64 hex); random by default. */
  readonly nonce?: string;
  /** Clock for validAfter/validBefore; Date.now() by default. */
  readonly nowMs?: number;
}

/** Decodes a `PAYMENT-REQUIRED` header value (standard base64 JSON). */
export function decodeX402PaymentRequired(headerValue: string): { x402Version: number; resource?: unknown; accepts: Record<string, unknown>[] } {
  const decoded = JSON.parse(Buffer.from(headerValue, 'base64').toString('utf8')) as { x402Version: number; resource?: unknown; accepts?: unknown };
  if (!Array.isArray(decoded.accepts) || decoded.accepts.length === 0) throw new Error('PAYMENT-REQUIRED offers no requirement');
  return decoded as { x402Version: number; resource?: unknown; accepts: Record<string, unknown>[] };
}

/** The `payment-signature` value answering a `PAYMENT-REQUIRED` challenge: standard base64 of an x402 v2
 * PaymentPayload that copies the first offered requirement as `accepted`, with an EIP-3009 authorization. The
 * signature is a placeholder of the right length: sandbox does not check it (live would, through a facilitator). */
export function sandboxX402PaymentSignature(challengeHeaderValue: string, options: SandboxX402Options): string {
  const paymentRequired = decodeX402PaymentRequired(challengeHeaderValue);
  const accepted = paymentRequired.accepts[0]!;
  const nowSeconds = Math.floor((options.nowMs ?? Date.now()) / 1000);
  const maxTimeoutSeconds = typeof accepted['maxTimeoutSeconds'] === 'number' ? accepted['maxTimeoutSeconds'] : 300;
  const payload = {
    x402Version: 2,
    ...(paymentRequired.resource ? { resource: paymentRequired.resource } : {}),
    accepted,
    payload: {
      signature: `0x${'00'.repeat(65)}`,
      authorization: {
        from: options.from,
        to: options.to ?? accepted['payTo'],
        value: options.value ?? accepted['amount'],
        validAfter: String(nowSeconds - 60),
        validBefore: String(nowSeconds + maxTimeoutSeconds),
        nonce: options.nonce ?? `0x${randomBytes(32).toString('hex')}`,
      },
    },
  };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}

export const x402ClientWire: RailClientWire = {
  rails: [x402RailName],
  credentialSchemes: {},
  sandboxCredential(header, outcome) {
    const challenge = header(x402ChallengeHeaderName.toLowerCase());
    if (!challenge) throw new RailChallengeMissingError('x402', x402ChallengeHeaderName);
    return { [x402CredentialHeaderName]: sandboxX402PaymentSignature(challenge, { from: sandboxX402Payers[outcome] }) };
  },
};
