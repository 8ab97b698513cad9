// Device login (RFC 8628, docs/sign-in.md#device-login): a CLI or SDK gets a device code and a user code; a
// signed-in person approves or denies the user code; the device, polling with the device code, receives a session
// token for that person in that person's tenant, once. The person's role comes from their membership when the token
// is issued, so a device never holds more than its approver may do now. In a sandbox tenant an admin may grant the
// device an API key of a chosen role instead, minted when the device collects it.
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../credentials/api-key.ts';
import type { Role } from '../credentials/roles.ts';
import { issueSessionToken } from '../credentials/session-token.ts';
import {
  consumeDeviceLogin,
  decideDeviceLogin,
  findDeviceLoginForTenant,
  insertDeviceLogin,
  lockDeviceLoginForPoll,
  recordDevicePoll,
  type DeviceGrant,
  type DeviceKeyRequest,
  type DeviceLoginPollState,
  type DeviceLoginView,
} from '../db/device-login-repository.ts';
import { findTenant } from '../db/tenant-repository.ts';
import { findMembership } from '../db/user-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import {
  apiKeyNameLengthMax,
  deviceCodeLifetimeMs,
  devicePollIntervalMaxSeconds,
  devicePollIntervalSeconds,
  deviceSlowDownStepSeconds,
  deviceUserCodeLength,
} from '../limits.ts';
import type { Database, Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { issueApiKey } from './api-key-service.ts';
import type { SessionGrant } from './sign-in-service.ts';

/** RFC 8628 section 6.1: no vowels (no words), and none of 0/O, 1/I/L that people mistake for each other. */
export const userCodeAlphabet = 'BCDFGHJKMNPQRSTVWXZ';
/** `dvc_<id: 32 hex>_<secret: 64 hex>`: the id finds the row, the whole code's SHA-256 proves the secret. */
export const deviceCodePattern = /^dvc_([0-9a-f]{32})_[0-9a-f]{64}$/;
export const deviceCodeGrantType = 'urn:ietf:params:oauth:grant-type:device_code';
/** Attempts at drawing a free user code; with 1.7e10 codes a second draw is already rare. */
const userCodeDrawsMax = 8;

export interface DeviceLoginContext {
  readonly database: Database;
  readonly gatewayKeys: GatewayKeyring;
}

export interface StartedDeviceLogin {
  readonly deviceCode: string;
  /** Shown as XXXX-XXXX. */
  readonly userCode: string;
  readonly expiresInSeconds: number;
  readonly intervalSeconds: number;
}

const deviceCodeDigest = (deviceCode: string): Buffer => createHash('sha256').update(deviceCode).digest();

function drawUserCode(): string {
  let code = '';
  // randomInt draws uniformly, so every code is equally likely.
  for (let index = 0; index < deviceUserCodeLength; index += 1) code += userCodeAlphabet[randomInt(userCodeAlphabet.length)];
  return code;
}

/** XXXX-XXXX, the way a person reads and types it. */
export const formatUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

/** The stored form of what a person typed: case ignored, one dash and spaces allowed; undefined when it cannot be a
 * user code (no lookup is made for it, but it still counts against the lookup limit). */
export function normalizeUserCode(typed: string): string | undefined {
  const letters = typed.toUpperCase().replace(/[\s-]/g, '');
  const valid = letters.length === deviceUserCodeLength && [...letters].every((letter) => userCodeAlphabet.includes(letter));
  return valid ? letters : undefined;
}

/** Starts a device login. `requested` is what a device started with `/device/start` asks for by name: an API key of
 * that environment and role, which an approval then grants exactly. */
export async function startDeviceLogin(database: Database, clientName: string | undefined, requested?: DeviceKeyRequest): Promise<StartedDeviceLogin> {
  const deviceLoginId = randomBytes(16).toString('hex');
  const deviceCode = `dvc_${deviceLoginId}_${randomBytes(32).toString('hex')}`;
  return database.system(async (tx) => {
    for (let draw = 0; draw < userCodeDrawsMax; draw += 1) {
      const userCode = drawUserCode();
      const inserted = await insertDeviceLogin(tx, {
        deviceLoginId,
        deviceCodeSha256: deviceCodeDigest(deviceCode),
        userCode,
        clientName,
        intervalSeconds: devicePollIntervalSeconds,
        lifetimeMs: deviceCodeLifetimeMs,
        requested,
      });
      if (inserted) {
        return { deviceCode, userCode: formatUserCode(userCode), expiresInSeconds: deviceCodeLifetimeMs / 1000, intervalSeconds: devicePollIntervalSeconds };
      }
    }
    // Eight taken codes in a row means the table is nearly full or the generator is broken: an invariant, not input.
    throw new Error(`no free user code after ${userCodeDrawsMax} draws`);
  });
}

/** What the device receives: the approver's session, or an API key (sandbox, granted by an admin). */
export type DeviceTokenGrant =
  | { readonly kind: 'session'; readonly session: SessionGrant }
  | {
      readonly kind: 'api_key';
      readonly apiKey: string;
      readonly keyId: string;
      readonly tenantId: string;
      readonly tenantUuid: string;
      readonly environment: Environment;
      readonly role: Role;
    };

type PollOutcome =
  | { readonly kind: 'refused'; readonly code: 'device_login.device_code_invalid' | 'device_login.expired_token' | 'device_login.access_denied' | 'device_login.authorization_pending' }
  | { readonly kind: 'slow_down'; readonly intervalSeconds: number }
  | { readonly kind: 'granted'; readonly grant: DeviceTokenGrant };

/** One token poll. The outcome is decided and recorded (poll time, a grown interval, consumption) in one transaction
 * holding the request's row lock; the refusal is thrown only after it commits. */
export async function pollDeviceToken(context: DeviceLoginContext, deviceCode: string): Promise<DeviceTokenGrant> {
  const outcome = await context.database.system((tx) => decidePoll(tx, context, deviceCode));
  if (outcome.kind === 'granted') return outcome.grant;
  if (outcome.kind === 'slow_down') throw new ServiceError('device_login.slow_down', { details: { interval: outcome.intervalSeconds } });
  throw new ServiceError(outcome.code);
}

async function decidePoll(tx: Queryable, context: DeviceLoginContext, deviceCode: string): Promise<PollOutcome> {
  const deviceLoginId = deviceCodePattern.exec(deviceCode)?.[1];
  const login = deviceLoginId === undefined ? undefined : await lockDeviceLoginForPoll(tx, deviceLoginId);
  const presented = deviceCodeDigest(deviceCode);
  // Always one constant-time comparison of two 32-byte digests, whether or not the id named a row.
  const matches = timingSafeEqual(presented, login?.deviceCodeSha256 ?? randomBytes(presented.length));
  if (!login || !matches || login.consumed) return { kind: 'refused', code: 'device_login.device_code_invalid' };
  if (login.expired) return { kind: 'refused', code: 'device_login.expired_token' };
  if (login.status === 'denied') return { kind: 'refused', code: 'device_login.access_denied' };
  if (login.status === 'pending') {
    // RFC 8628 section 3.5: a device polling sooner than its interval gets slow_down, and its interval grows by 5 s
    // for this and every later poll.
    const slowDown = login.tooSoon ? { stepSeconds: deviceSlowDownStepSeconds, maxSeconds: devicePollIntervalMaxSeconds } : undefined;
    const intervalSeconds = await recordDevicePoll(tx, login.deviceLoginId, slowDown);
    return slowDown ? { kind: 'slow_down', intervalSeconds } : { kind: 'refused', code: 'device_login.authorization_pending' };
  }
  return login.grant.kind === 'api_key' ? grantApiKey(tx, login, login.grant.keyRole) : grantSession(tx, context, login);
}

/** The approver's session, with their membership as it is now: removed meanwhile means nothing to grant. */
async function grantSession(tx: Queryable, context: DeviceLoginContext, login: DeviceLoginPollState): Promise<PollOutcome> {
  const membership = await findMembership(tx, login.tenantId!, login.userId!);
  await consumeDeviceLogin(tx, login.deviceLoginId);
  if (!membership) return { kind: 'refused', code: 'device_login.access_denied' };
  // Signed before the commit: if signing failed the device code would stay unredeemed rather than be spent for nothing.
  const token = await issueSessionToken(context.gatewayKeys, membership);
  const session = { accessToken: token.accessToken, expiresInSeconds: token.expiresInSeconds, tenantId: membership.tenantId, userId: membership.userId, roles: [membership.role] };
  return { kind: 'granted', grant: { kind: 'session', session } };
}

/** A key minted on the approver's authority as it is now: still an admin of that tenant, which is still sandbox, or
 * of the environment the device asked for by name. */
async function grantApiKey(tx: Queryable, login: DeviceLoginPollState, keyRole: Role): Promise<PollOutcome> {
  const membership = await findMembership(tx, login.tenantId!, login.userId!);
  const tenant = await findTenant(tx, login.tenantId!);
  const environmentGranted = login.requested === null ? 'sandbox' : login.requested.environment;
  if (membership?.role !== 'admin' || tenant?.environment !== environmentGranted) {
    await consumeDeviceLogin(tx, login.deviceLoginId);
    return { kind: 'refused', code: 'device_login.access_denied' };
  }
  const name = `device login: ${login.clientName ?? 'unnamed device'}`.slice(0, apiKeyNameLengthMax);
  const issued = await issueApiKey(tx, tenant, { role: keyRole, name });
  await consumeDeviceLogin(tx, login.deviceLoginId, issued.record.keyId);
  const grant = { kind: 'api_key', apiKey: issued.apiKey, keyId: issued.record.keyId, tenantId: tenant.tenantId, tenantUuid: tenant.tenantUuid, environment: tenant.environment, role: keyRole } as const;
  return { kind: 'granted', grant };
}

/** The approver: a signed-in person in one tenant. */
export interface DeviceLoginApprover {
  readonly tenantId: string;
  readonly userId: string;
  readonly role: Role;
  readonly environment: Environment;
}

/** What the person approving sees: an undecided request, or one their own tenant decided. Anything else (mistyped,
 * expired, decided in another tenant) is the same 404. */
export async function readDeviceLogin(database: Database, approver: DeviceLoginApprover, typedUserCode: string): Promise<DeviceLoginView> {
  const userCode = normalizeUserCode(typedUserCode);
  const view = userCode === undefined ? undefined : await database.tenant(approver.tenantId, (tx) => findDeviceLoginForTenant(tx, approver.tenantId, userCode));
  if (!view) throw new ServiceError('device_login.not_found');
  return view;
}

export interface DeviceDecision {
  readonly decision: 'approve' | 'deny';
  /** What an approval grants; default the approver's session. */
  readonly grant?: 'session' | 'api_key' | undefined;
  /** The role of the key, with `grant: 'api_key'` only. */
  readonly keyRole?: Role | undefined;
}

/**
 * The grant a decision gives. A device that asked for an API key by name (`requested`) gets exactly that key: the
 * approval grants it without saying so, another grant is refused, and only an admin of a tenant of the asked
 * environment may approve it (live included: the device named it, and the admin sees what it asks). Otherwise the
 * approver's session, or in a sandbox tenant an admin's opt-in key of a chosen role.
 */
function grantOfDecision(approver: DeviceLoginApprover, request: DeviceDecision, requested: DeviceKeyRequest | null): DeviceGrant {
  const wantsKey = request.grant === 'api_key';
  if (wantsKey !== (request.keyRole !== undefined) || (wantsKey && request.decision !== 'approve')) throw new ServiceError('device_login.grant_invalid');
  if (request.decision === 'deny') return { kind: 'session' };
  if (requested !== null) {
    if ((request.grant !== undefined && !wantsKey) || (request.keyRole !== undefined && request.keyRole !== requested.keyRole)) {
      throw new ServiceError('device_login.grant_invalid', { details: { requested_grant: 'api_key', requested_key_role: requested.keyRole } });
    }
    if (approver.environment !== requested.environment) {
      throw new ServiceError('device_login.environment_mismatch', { details: { requested_environment: requested.environment, tenant_environment: approver.environment } });
    }
    if (approver.role !== 'admin') throw new ServiceError('auth.role_insufficient');
    return { kind: 'api_key', keyRole: requested.keyRole };
  }
  if (!wantsKey) return { kind: 'session' };
  if (approver.environment !== 'sandbox') throw new ServiceError('device_login.api_key_sandbox_only');
  // Minting keys is for admins, over this route as over POST /v1/admin/api-keys.
  if (approver.role !== 'admin') throw new ServiceError('auth.role_insufficient');
  return { kind: 'api_key', keyRole: request.keyRole! };
}

/** Approves or denies an undecided request: it is then bound to the approver's tenant and person. */
export async function decideDevice(database: Database, approver: DeviceLoginApprover, typedUserCode: string, request: DeviceDecision): Promise<DeviceLoginView> {
  const userCode = normalizeUserCode(typedUserCode);
  if (userCode === undefined) throw new ServiceError('device_login.not_found');
  return database.tenant(approver.tenantId, async (tx) => {
    // What the device asked for is fixed at its start, so reading it before the decision's update is safe.
    const seenBefore = await findDeviceLoginForTenant(tx, approver.tenantId, userCode);
    const grant = grantOfDecision(approver, request, seenBefore?.requested ?? null);
    const status = request.decision === 'approve' ? 'approved' : 'denied';
    const decided = await decideDeviceLogin(tx, approver.tenantId, { userCode, userId: approver.userId, status, grant });
    if (decided) return decided;
    // Nothing undecided under that code for this tenant: decided here before (409), or not ours to see (404).
    const seen = await findDeviceLoginForTenant(tx, approver.tenantId, userCode);
    throw new ServiceError(seen ? 'device_login.already_decided' : 'device_login.not_found');
  });
}
