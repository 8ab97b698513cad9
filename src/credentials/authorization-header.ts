// The Authorization header read as the credentials it carries: one `Bearer <token>`, and on a fund request
// optionally the MPP payment credential after it (`Bearer <key>, Payment <credential>`), as the public client's
// direct engine client sends it (docs/rails.md). Both the authenticator and the MPP rail read the header here.

export interface AuthorizationCredentials {
  /** The bearer token (API key or session JWT). */
  readonly bearer: string | undefined;
  /** The payment credential exactly as written in the header, scheme included (`Payment <base64url>`). */
  readonly payment: string | undefined;
}

/** A credential is `<scheme> <token68>` (RFC 9110 §11.4); the schemes are case-insensitive. A token68 holds no comma,
 * so a comma can only separate credentials. */
const credentialPattern = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*) +([A-Za-z0-9._~+/-]+=*)$/;

/**
 * The credentials of an Authorization header, or undefined when it is not one or two comma-separated credentials,
 * at most one per scheme, of the schemes Bearer and Payment. Anything else is refused whole rather than half read.
 */
export function readAuthorizationHeader(header: string): AuthorizationCredentials | undefined {
  const parts = header.split(',').map((part) => part.trim());
  if (parts.length > 2) return undefined;
  let bearer: string | undefined;
  let payment: string | undefined;
  for (const part of parts) {
    const match = credentialPattern.exec(part);
    if (!match) return undefined;
    const scheme = match[1]!.toLowerCase();
    if (scheme === 'bearer' && bearer === undefined) bearer = match[2]!;
    else if (scheme === 'payment' && payment === undefined) payment = part;
    else return undefined;
  }
  return { bearer, payment };
}
