// The MPP rail's wire facts a client shares with the server (docs/rails.md#mpp-processor_mpp): its name and alias,
// its headers, the sandbox's test tokens, a `WWW-Authenticate` parser, and a builder of sandbox credentials from a
// 402's challenge, for tests, the SDK and its examples. Pure: the SDK imports it.
import { RailChallengeMissingError, type RailClientWire } from '../wire-facts.ts';

export const mppRailName = 'processor_mpp';
/** The public client's name for this rail; the alias changes nothing (docs/rails.md#funding-rails). */
export const mppRailAliases = ['stripe_mpp'] as const;

export const mppChallengeHeaderName = 'WWW-Authenticate';
export const mppCredentialHeaderName = 'x-svc-payment-authorization';
export const mppReceiptHeaderName = 'Payment-Receipt';
/** The auth scheme of an MPP credential, in either header that carries one. */
export const mppAuthScheme = 'Payment';
export const mppMethod = 'stripe';
export const mppIntent = 'charge';

/** Sandbox tokens with a fixed outcome (docs/rails.md). Any other token is refused as `verification-failed`. */
export const sandboxMppTokens = {
  success: 'tok_sandbox_success',
  decline: 'tok_sandbox_decline',
  pending: 'tok_sandbox_pending',
} as const;

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
    (candidate) => candidate.scheme.toLowerCase() === 'payment' && candidate.params['method'] === mppMethod && candidate.params['intent'] === mppIntent,
  );
  if (!challenge) throw new Error('no Payment challenge with method="stripe" and intent="charge"');
  const credential = { challenge: challenge.params, payload: { token } };
  return `Payment ${Buffer.from(JSON.stringify(credential), 'utf8').toString('base64url')}`;
}

export const mppClientWire: RailClientWire = {
  rails: [mppRailName, ...mppRailAliases],
  credentialSchemes: { [mppCredentialHeaderName]: mppAuthScheme },
  sandboxCredential(header, outcome) {
    const challenge = header(mppChallengeHeaderName.toLowerCase());
    if (!challenge) throw new RailChallengeMissingError('MPP', mppChallengeHeaderName);
    return { [mppCredentialHeaderName]: sandboxMppAuthorization(challenge, sandboxMppTokens[outcome]) };
  },
};
