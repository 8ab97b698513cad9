// Session JWTs (docs/sign-in.md#session-tokens): issued by challenges/verify, presented as `Authorization: Bearer` on
// every protected route. Signing and the strict checks (EdDSA only, kid, iss, aud, exp, nbf, skew) are gateway-jwt.ts;
// this file fixes the session's claims and reads them back, refusing any token whose claims are not exactly ours.
import type { JWTPayload } from 'jose';
import { sessionTokenLifetimeSeconds, tenantIdLengthMax, tenantIdPattern } from '../limits.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { jwtAudiences, signGatewayJwt } from './gateway-jwt.ts';
import { isRole, type Role } from './roles.ts';

export const userIdPattern = /^usr_[0-9a-f]{32}$/;

export interface SessionClaims {
  readonly userId: string;
  readonly tenantId: string;
  readonly role: Role;
  readonly tokenId: string;
  readonly expiresAt: Date;
}

export interface IssuedSessionToken {
  readonly accessToken: string;
  readonly expiresInSeconds: number;
}

export async function issueSessionToken(
  keyring: GatewayKeyring,
  session: { userId: string; tenantId: string; role: Role },
  now?: Date,
): Promise<IssuedSessionToken> {
  const accessToken = await signGatewayJwt(keyring, { roles: [session.role] }, {
    audience: jwtAudiences.session,
    subject: session.userId,
    tenantId: session.tenantId,
    expiresInSeconds: sessionTokenLifetimeSeconds,
    ...(now ? { now } : {}),
  });
  return { accessToken, expiresInSeconds: sessionTokenLifetimeSeconds };
}

/** The claims of a token that verifyGatewayJwt accepted for the session audience; undefined when they are not the
 * claims we issue (a subject that is not a user id, not exactly one known role, a life longer than a session's). */
export function readSessionClaims(payload: JWTPayload & { tid: string }): SessionClaims | undefined {
  const { sub, tid, jti, exp, iat } = payload;
  const roles = (payload as { roles?: unknown }).roles;
  if (typeof sub !== 'string' || !userIdPattern.test(sub)) return undefined;
  if (tid.length > tenantIdLengthMax || !tenantIdPattern.test(tid)) return undefined;
  if (!Array.isArray(roles) || roles.length !== 1 || !isRole(roles[0])) return undefined;
  if (typeof jti !== 'string' || typeof exp !== 'number' || typeof iat !== 'number') return undefined;
  if (exp - iat > sessionTokenLifetimeSeconds) return undefined;
  return { userId: sub, tenantId: tid, role: roles[0], tokenId: jti, expiresAt: new Date(exp * 1000) };
}
