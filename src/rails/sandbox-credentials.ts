// Builds valid sandbox credentials from a 402's challenge headers, for tests, the SDK and its examples: what a
// wallet (x402) or a payment client (MPP) would send, minus the real signature the sandbox does not check.
// docs/rails.md lists the test payers and tokens that pick each outcome.
import { randomBytes } from 'node:crypto';

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

export interface PaymentChallenge {
  /** The auth scheme as written (e.g. `Payment`). */
  readonly scheme: string;
  readonly params: Record<string, string>;
}

/** Parses `WWW-Authenticate` values (one header, several, or several challenges joined by commas) into challenges
 * with their auth-params (`name="quoted"` or `name=token`, RFC 9110 §11). */
export function parseWwwAuthenticate(value: string | readonly string[]): PaymentChallenge[] {
  const values = typeof value === 'string' ? [value] : value;
  return values.flatMap(parseOneHeader);
}

function parseOneHeader(text: string): PaymentChallenge[] {
  const challenges: { scheme: string; params: Record<string, string> }[] = [];
  let position = 0;
  const skip = (pattern: RegExp) => {
    while (position < text.length && pattern.test(text[position]!)) position += 1;
  };
  const readToken = () => {
    const start = position;
    skip(/[!#$%&'*+.^_`|~0-9A-Za-z-]/);
    return text.slice(start, position);
  };
  while (position < text.length) {
    skip(/[\s,]/);
    const token = readToken();
    if (token.length === 0) break;
    skip(/[ \t]/);
    if (text[position] === '=' && challenges.length > 0) {
      position += 1;
      skip(/[ \t]/);
      challenges.at(-1)!.params[token.toLowerCase()] = readValue();
    } else {
      challenges.push({ scheme: token, params: {} });
    }
  }
  return challenges;

  function readValue(): string {
    if (text[position] !== '"') return readToken();
    position += 1;
    let result = '';
    while (position < text.length && text[position] !== '"') {
      if (text[position] === '\\') position += 1;
      result += text[position] ?? '';
      position += 1;
    }
    position += 1;
    return result;
  }
}

/** The `x-svc-payment-authorization` value answering an MPP challenge: `Payment ` + base64url (no padding) of
 * `{challenge: {…the challenge's params as issued}, payload: {token}}`. Takes the first `Payment` challenge with
 * method `stripe` and intent `charge`. */
export function sandboxMppAuthorization(wwwAuthenticateValue: string | readonly string[], token: string): string {
  const challenge = parseWwwAuthenticate(wwwAuthenticateValue).find(
    (candidate) => candidate.scheme.toLowerCase() === 'payment' && candidate.params['method'] === 'stripe' && candidate.params['intent'] === 'charge',
  );
  if (!challenge) throw new Error('no Payment challenge with method="stripe" and intent="charge"');
  const credential = { challenge: challenge.params, payload: { token } };
  return `Payment ${Buffer.from(JSON.stringify(credential), 'utf8').toString('base64url')}`;
}
