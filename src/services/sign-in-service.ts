// Sign-in with a one-time code (docs/sign-in.md): login/start creates a challenge and mails a code;
// challenges/verify trades the right code for a session JWT. Every answer about a code is the same 401
// `auth.code_invalid`, and a challenge for an unknown email behaves exactly like any other, so neither route tells
// whether an email has an account.
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { issueSessionToken } from '../credentials/session-token.ts';
import type { Role } from '../credentials/roles.ts';
import {
  consumeLoginChallenge,
  insertLoginChallenge,
  lockLoginChallenge,
  recordFailedAttempt,
} from '../db/login-challenge-repository.ts';
import { takeLatestOutboxCode, type OutboxCode } from '../db/mail-outbox-repository.ts';
import { findMembership, findUserByEmail, hasAnyMembership, listMembershipsOfUser, type Membership } from '../db/user-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import { signInAttemptsMax, signInChallengeLifetimeMs, signInCodeDigits, signInTenantChoicesMax } from '../limits.ts';
import type { Database, Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { isValidEmail, normalizeEmail } from './user-service.ts';

// The mail port this service sends through; services/mail-transport.ts implements it (SMTP, or the local outbox).
export interface SignInCodeMessage {
  readonly email: string;
  readonly challengeId: string;
  readonly code: string;
  readonly expiresAt: Date;
}

/** Two steps, so that nothing slow or fallible runs inside the challenge's transaction: `stage` records what must
 * commit with the challenge (the outbox row); `send` runs after the commit and never throws or blocks the caller. */
export interface MailTransport {
  readonly kind: 'smtp' | 'outbox';
  stage(systemTx: Queryable, message: SignInCodeMessage): Promise<void>;
  send(message: SignInCodeMessage): void;
  /** Waits for deliveries in flight, then releases the transport. */
  close(): Promise<void>;
}

export interface SignInContext {
  readonly database: Database;
  readonly gatewayKeys: GatewayKeyring;
  readonly mail: MailTransport;
}

export interface StartedChallenge {
  readonly challengeId: string;
  readonly expiresAt: Date;
}

export interface SessionGrant {
  readonly accessToken: string;
  readonly expiresInSeconds: number;
  readonly tenantId: string;
  readonly userId: string;
  readonly roles: readonly Role[];
}

export const challengeIdPattern = /^lch_[0-9a-f]{32}$/;

/** The digest binds the code to its challenge, so equal codes of two challenges do not have equal digests. */
function codeDigest(challengeId: string, code: string): Buffer {
  return createHash('sha256').update(`${challengeId}:${code}`).digest();
}

function mintCode(): string {
  // randomInt draws uniformly (rejection sampling), so every code is equally likely.
  return randomInt(0, 10 ** signInCodeDigits).toString().padStart(signInCodeDigits, '0');
}

/** Always creates a challenge and answers the same shape. Only an email with a membership gets a code that can
 * verify, and only it gets mail; the work done is otherwise the same (one lookup, one insert). */
export async function startSignIn(context: SignInContext, rawEmail: string): Promise<StartedChallenge> {
  const email = normalizeEmail(rawEmail);
  // The contract checked the email as sent; its normalized form is the one stored, and may be longer.
  if (!isValidEmail(email)) throw new ServiceError('user.email_invalid');
  const challengeId = `lch_${randomBytes(16).toString('hex')}`;
  const code = mintCode();
  const started = await context.database.system(async (tx) => {
    const user = await findUserByEmail(tx, email);
    const userId = user && (await hasAnyMembership(tx, user.userId)) ? user.userId : null;
    // For an unknown email the digest is of random bytes: no code can match it.
    const codeSha256 = userId ? codeDigest(challengeId, code) : createHash('sha256').update(randomBytes(32)).digest();
    const { expiresAt } = await insertLoginChallenge(tx, { challengeId, email, userId, codeSha256, lifetimeMs: signInChallengeLifetimeMs });
    const message: SignInCodeMessage | undefined = userId ? { email, challengeId, code, expiresAt } : undefined;
    if (message) await context.mail.stage(tx, message);
    return { expiresAt, message };
  });
  if (started.message) context.mail.send(started.message);
  return { challengeId, expiresAt: started.expiresAt };
}

export interface VerifyRequest {
  readonly challengeId: string;
  readonly code: string;
  readonly tenantId?: string | undefined;
}

type VerifyOutcome =
  | { readonly kind: 'rejected' }
  | { readonly kind: 'tenant_required'; readonly tenantIds: string[] }
  | { readonly kind: 'granted'; readonly grant: SessionGrant };

/** Trades a code for a session JWT. The outcome is decided and recorded (attempt counted, lock, consumption) in one
 * transaction holding the challenge's row lock; the error is thrown only after it commits. */
export async function verifySignIn(context: SignInContext, request: VerifyRequest): Promise<SessionGrant> {
  const outcome = await context.database.system((tx): Promise<VerifyOutcome> => decide(tx, context, request));
  if (outcome.kind === 'rejected') throw new ServiceError('auth.code_invalid');
  if (outcome.kind === 'tenant_required') throw new ServiceError('auth.tenant_required', { details: { tenant_ids: outcome.tenantIds } });
  return outcome.grant;
}

async function decide(tx: Queryable, context: SignInContext, request: VerifyRequest): Promise<VerifyOutcome> {
  const rejected = { kind: 'rejected' } as const;
  const challenge = await lockLoginChallenge(tx, request.challengeId);
  const presented = codeDigest(request.challengeId, request.code);
  // Always one constant-time comparison of two 32-byte digests, whatever the state of the challenge.
  const matches = timingSafeEqual(presented, challenge?.codeSha256 ?? randomBytes(presented.length));
  if (!challenge || challenge.locked || challenge.consumed || challenge.expired) return rejected;
  if (!matches || challenge.userId === null) {
    await recordFailedAttempt(tx, challenge.challengeId, signInAttemptsMax);
    return rejected;
  }
  // The code is right. Only now may the answer depend on the person's memberships.
  const chosen = await chooseMembership(tx, challenge.userId, request.tenantId);
  if (chosen === 'none') {
    // Removed from every tenant since login/start: nothing to sign in to.
    await consumeLoginChallenge(tx, challenge.challengeId);
    return rejected;
  }
  if (chosen === 'ambiguous') {
    // Not consumed and not counted: the same code is repeated with tenant_id.
    const memberships = await listMembershipsOfUser(tx, challenge.userId, signInTenantChoicesMax);
    return { kind: 'tenant_required', tenantIds: memberships.map((membership) => membership.tenantId) };
  }
  await consumeLoginChallenge(tx, challenge.challengeId);
  // Signed before the commit: if signing failed the code would stay unused rather than be spent for nothing.
  const token = await issueSessionToken(context.gatewayKeys, chosen);
  return {
    kind: 'granted',
    grant: { accessToken: token.accessToken, expiresInSeconds: token.expiresInSeconds, tenantId: chosen.tenantId, userId: chosen.userId, roles: [chosen.role] },
  };
}

/** The membership to sign in to: the one named, else the only one; 'ambiguous' when the person must name one. */
async function chooseMembership(tx: Queryable, userId: string, tenantId: string | undefined): Promise<Membership | 'none' | 'ambiguous'> {
  if (tenantId !== undefined) {
    const named = await findMembership(tx, tenantId, userId);
    if (named) return named;
  }
  const memberships = await listMembershipsOfUser(tx, userId, 2);
  if (memberships.length === 0) return 'none';
  return tenantId === undefined && memberships.length === 1 ? memberships[0]! : 'ambiguous';
}

/** For `svc auth outbox`: the newest code still waiting for this email, marked delivered; undefined if none. */
export async function takeOutboxCode(database: Database, email: string): Promise<OutboxCode | undefined> {
  return database.system((tx) => takeLatestOutboxCode(tx, normalizeEmail(email)));
}
