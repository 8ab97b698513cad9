// Contracts of sign-in with a one-time code (docs/sign-in.md): login/start answers a challenge whatever the email
// (no account enumeration); challenges/verify trades the code for a session JWT. The session grant is shared with
// single sign-on and device login.
import Type, { type Static } from 'typebox';
import { emailLengthMax, signInCodeDigits, tenantIdLengthMax, tenantIdPattern } from '../limits.ts';
import { Timestamp } from './common.ts';

/** A local part, "@", a domain; no whitespace or control characters (so no header injection). The same rule is the
 * SQL CHECK of `users.email`. */
export const emailPatternSource = '^[^@\\s\\p{Cc}]+@[^@\\s\\p{Cc}]+$';
export const emailLengthMin = 3;

export const TenantId = Type.String({ minLength: 1, maxLength: tenantIdLengthMax, pattern: tenantIdPattern.source });
export type TenantId = Static<typeof TenantId>;

export const SignInStartBody = Type.Object(
  { email: Type.String({ minLength: emailLengthMin, maxLength: emailLengthMax, pattern: emailPatternSource }) },
  { additionalProperties: false },
);
export type SignInStartBody = Static<typeof SignInStartBody>;

export const SignInChallenge = Type.Object(
  { challenge_id: Type.String({ pattern: '^lch_[0-9a-f]{32}$' }), expires_at: Timestamp },
  { additionalProperties: false },
);
export type SignInChallenge = Static<typeof SignInChallenge>;

export const SignInVerifyBody = Type.Object(
  {
    challenge_id: Type.String({ pattern: '^lch_[0-9a-f]{32}$' }),
    code: Type.String({ pattern: `^[0-9]{${signInCodeDigits}}$` }),
    tenant_id: Type.Optional(TenantId),
  },
  { additionalProperties: false },
);
export type SignInVerifyBody = Static<typeof SignInVerifyBody>;

/** A person's session, as sign-in, single sign-on and device login answer it (RFC 6749 token answer fields). */
export const SessionGrant = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ minimum: 1 }),
    tenant_id: Type.String(),
    user_id: Type.String(),
    roles: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);
export type SessionGrant = Static<typeof SessionGrant>;
