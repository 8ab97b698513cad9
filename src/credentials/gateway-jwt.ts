// JWTs the gateway signs with its active key and verifies against its published keys: EdDSA only, `kid` required,
// one audience per kind of token so that no token is accepted where another kind is expected.
import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';

export const jwtIssuer = 'svc-gateway';

/** The audiences of our JWTs (docs/decisions.md#gateway-signing-keys); each is rejected where another is expected. */
export const jwtAudiences = {
  session: 'svc-session',
  auditExportDownload: 'svc-audit-export-download',
  capability: 'svc-capability',
} as const;
export type JwtAudience = (typeof jwtAudiences)[keyof typeof jwtAudiences];

/** Clock skew tolerated between replicas and clients when checking `exp`, `nbf` and `iat`. */
export const jwtClockToleranceSeconds = 30;

export interface SignJwtOptions {
  readonly audience: JwtAudience;
  readonly subject: string;
  readonly tenantId: string;
  readonly expiresInSeconds: number;
  readonly now?: Date;
}

const base64UrlJson = (value: object): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/**
 * A compact JWS (RFC 7515 §7.1) over the claims, signed with the active key. Written out here rather than through
 * jose's SignJWT, which signs through WebCrypto: a deep copy of the claims, algorithm normalization and a thread-pool
 * hop per token, paid by every funded intent for its capability token. The bytes are the ones SignJWT produces for
 * the same claims (the same JSON member order, base64url without padding, and Ed25519 signatures are deterministic):
 * test/surfaces/gateway/gateway-keys.test.ts compares the two.
 */
export async function signGatewayJwt(keyring: GatewayKeyring, claims: Record<string, unknown>, options: SignJwtOptions): Promise<string> {
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const expiresAt = issuedAt + options.expiresInSeconds;
  if (!Number.isSafeInteger(issuedAt) || !Number.isSafeInteger(expiresAt)) throw new TypeError('a JWT needs whole-second iat and exp');
  const key = keyring.active;
  const header = { alg: 'EdDSA', kid: key.kid, typ: 'JWT' };
  // Member order as SignJWT's setters leave it: the caller's claims, tid, then the registered claims (a registered
  // claim among the caller's keeps its place and takes the value set here).
  const payload = {
    ...claims,
    tid: options.tenantId,
    iss: jwtIssuer,
    sub: options.subject,
    aud: options.audience,
    iat: issuedAt,
    nbf: issuedAt,
    exp: expiresAt,
    jti: randomUUID(),
  };
  const signingInput = `${base64UrlJson(header)}.${base64UrlJson(payload)}`;
  return `${signingInput}.${Buffer.from(key.signer.sign(Buffer.from(signingInput, 'ascii'))).toString('base64url')}`;
}

export type JwtRejection = 'expired' | 'invalid';

export class JwtRejectedError extends Error {
  constructor(readonly reason: JwtRejection, message: string) {
    super(message);
    this.name = 'JwtRejectedError';
  }
}

/** Verifies a gateway JWT for one audience. Throws JwtRejectedError; never says which check failed beyond
 * expired/invalid, so callers cannot leak it. */
export async function verifyGatewayJwt(keyring: GatewayKeyring, token: string, audience: JwtAudience): Promise<JWTPayload & { tid: string }> {
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        // The kid is required and must name a published key; alg is pinned below, before any key is used.
        const key = header.kid === undefined ? undefined : keyring.find(header.kid);
        if (!key) throw new JwtRejectedError('invalid', 'unknown or missing kid');
        return key.publicKey;
      },
      {
        algorithms: ['EdDSA'],
        audience,
        issuer: jwtIssuer,
        clockTolerance: jwtClockToleranceSeconds,
        requiredClaims: ['exp', 'iat', 'sub', 'jti', 'tid'],
      },
    );
    if (typeof payload.tid !== 'string' || payload.tid === '') throw new JwtRejectedError('invalid', 'tid claim missing');
    return payload as JWTPayload & { tid: string };
  } catch (error) {
    if (error instanceof JwtRejectedError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw new JwtRejectedError('expired', 'token expired');
    throw new JwtRejectedError('invalid', 'token rejected');
  }
}
