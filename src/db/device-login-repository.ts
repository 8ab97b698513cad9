// Device logins (migrations/0018_device_login.sql): created and polled by the device through the system role (the
// device has no tenant), read and decided by a signed-in person through their tenant's transaction, where row-level
// security shows only undecided requests and those of the person's own tenant.
import type { Environment } from '../credentials/api-key.ts';
import type { Role } from '../credentials/roles.ts';
import type { Queryable } from '../infra/database.ts';

export type DeviceLoginStatus = 'pending' | 'approved' | 'denied';
/** What an approval grants the device: the approver's session, or (sandbox, admin) an API key of a chosen role. */
export type DeviceGrant = { readonly kind: 'session' } | { readonly kind: 'api_key'; readonly keyRole: Role };

/** What a device started with `/device/start` asks for by name: an API key of this environment and role. */
export interface DeviceKeyRequest {
  readonly environment: Environment;
  readonly keyRole: Role;
}

export interface NewDeviceLogin {
  readonly deviceLoginId: string;
  readonly deviceCodeSha256: Buffer;
  /** Normalized: the letters alone, no dash. */
  readonly userCode: string;
  readonly clientName: string | undefined;
  readonly intervalSeconds: number;
  readonly lifetimeMs: number;
  readonly requested: DeviceKeyRequest | undefined;
}

/** What a device's poll needs, its times judged by the database clock (one clock for every replica). */
export interface DeviceLoginPollState {
  readonly deviceLoginId: string;
  readonly deviceCodeSha256: Buffer;
  readonly status: DeviceLoginStatus;
  readonly consumed: boolean;
  readonly expired: boolean;
  /** The previous poll came sooner than the interval before this one. */
  readonly tooSoon: boolean;
  readonly intervalSeconds: number;
  readonly tenantId: string | null;
  readonly userId: string | null;
  readonly grant: DeviceGrant;
  readonly clientName: string | null;
  readonly requested: DeviceKeyRequest | null;
}

/** What the approver sees. */
export interface DeviceLoginView {
  readonly userCode: string;
  readonly clientName: string | null;
  readonly status: DeviceLoginStatus;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly decidedAt: Date | null;
  readonly tenantId: string | null;
  readonly grant: DeviceGrant;
  readonly requested: DeviceKeyRequest | null;
}

const grantOf = (row: { grant_kind: 'session' | 'api_key'; key_role: Role | null }): DeviceGrant =>
  row.grant_kind === 'api_key' ? { kind: 'api_key', keyRole: row.key_role! } : { kind: 'session' };

interface RequestedColumns {
  requested_environment: Environment | null;
  requested_key_role: Role | null;
}

const requestedOf = (row: RequestedColumns): DeviceKeyRequest | null =>
  row.requested_environment === null ? null : { environment: row.requested_environment, keyRole: row.requested_key_role! };

/** Inserts the request; undefined when the user code is already taken (the caller draws another). */
export async function insertDeviceLogin(systemTx: Queryable, login: NewDeviceLogin): Promise<{ expiresAt: Date } | undefined> {
  const { rows } = await systemTx.query<{ expires_at: Date }>(
    `INSERT INTO device_authorizations (device_authorization_id, device_code_sha256, user_code, client_name, interval_seconds, expires_at,
       requested_environment, requested_key_role)
     VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond', $7, $8)
     ON CONFLICT (user_code) DO NOTHING
     RETURNING expires_at`,
    [
      login.deviceLoginId,
      login.deviceCodeSha256,
      login.userCode,
      login.clientName ?? null,
      login.intervalSeconds,
      login.lifetimeMs,
      login.requested?.environment ?? null,
      login.requested?.keyRole ?? null,
    ],
  );
  return rows[0] ? { expiresAt: rows[0].expires_at } : undefined;
}

/** Reads and locks the request for the rest of the transaction, so concurrent polls are judged one after another
 * and a token is handed out once. */
export async function lockDeviceLoginForPoll(systemTx: Queryable, deviceLoginId: string): Promise<DeviceLoginPollState | undefined> {
  const { rows } = await systemTx.query<RequestedColumns & {
    device_authorization_id: string;
    device_code_sha256: Buffer;
    status: DeviceLoginStatus;
    consumed: boolean;
    expired: boolean;
    too_soon: boolean;
    interval_seconds: number;
    tenant_id: string | null;
    user_id: string | null;
    grant_kind: 'session' | 'api_key';
    key_role: Role | null;
    client_name: string | null;
  }>(
    `SELECT device_authorization_id, device_code_sha256, status, consumed_at IS NOT NULL AS consumed,
            expires_at <= now() AS expired,
            coalesce(last_polled_at + interval_seconds * interval '1 second' > now(), false) AS too_soon,
            interval_seconds, tenant_id, user_id, grant_kind, key_role, client_name, requested_environment, requested_key_role
     FROM device_authorizations WHERE device_authorization_id = $1 FOR UPDATE`,
    [deviceLoginId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    deviceLoginId: row.device_authorization_id,
    deviceCodeSha256: row.device_code_sha256,
    status: row.status,
    consumed: row.consumed,
    expired: row.expired,
    tooSoon: row.too_soon,
    intervalSeconds: row.interval_seconds,
    tenantId: row.tenant_id,
    userId: row.user_id,
    grant: grantOf(row),
    clientName: row.client_name,
    requested: requestedOf(row),
  };
}

/** Records a poll; with `slowDownStepSeconds` the interval grows by that much (capped). Returns the interval. */
export async function recordDevicePoll(systemTx: Queryable, deviceLoginId: string, slowDown: { stepSeconds: number; maxSeconds: number } | undefined): Promise<number> {
  const { rows } = await systemTx.query<{ interval_seconds: number }>(
    `UPDATE device_authorizations
     SET last_polled_at = now(), interval_seconds = least(interval_seconds + $2, $3)
     WHERE device_authorization_id = $1
     RETURNING interval_seconds`,
    [deviceLoginId, slowDown?.stepSeconds ?? 0, slowDown?.maxSeconds ?? 2_147_483_647],
  );
  return rows[0]!.interval_seconds;
}

/** Marks the request redeemed, with the id of the key minted for it when the grant was a key. */
export async function consumeDeviceLogin(systemTx: Queryable, deviceLoginId: string, keyId?: string): Promise<void> {
  await systemTx.query('UPDATE device_authorizations SET consumed_at = now(), last_polled_at = now(), key_id = $2 WHERE device_authorization_id = $1', [
    deviceLoginId,
    keyId ?? null,
  ]);
}

const viewColumns = 'user_code, client_name, status, created_at, expires_at, decided_at, tenant_id, grant_kind, key_role, requested_environment, requested_key_role';

interface ViewRow extends RequestedColumns {
  user_code: string;
  client_name: string | null;
  status: DeviceLoginStatus;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  tenant_id: string | null;
  grant_kind: 'session' | 'api_key';
  key_role: Role | null;
}

const toView = (row: ViewRow): DeviceLoginView => ({
  userCode: row.user_code,
  clientName: row.client_name,
  status: row.status,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  decidedAt: row.decided_at,
  tenantId: row.tenant_id,
  grant: grantOf(row),
  requested: requestedOf(row),
});

/** An unexpired request by its user code, if it is undecided or decided by this tenant. */
export async function findDeviceLoginForTenant(tx: Queryable, tenantId: string, userCode: string): Promise<DeviceLoginView | undefined> {
  const { rows } = await tx.query<ViewRow>(
    `SELECT ${viewColumns} FROM device_authorizations
     WHERE user_code = $1 AND (tenant_id IS NULL OR tenant_id = $2) AND expires_at > now()`,
    [userCode, tenantId],
  );
  return rows[0] ? toView(rows[0]) : undefined;
}

/** Decides an undecided, unexpired request for this tenant and person; undefined when there is none to decide. */
export async function decideDeviceLogin(
  tx: Queryable,
  tenantId: string,
  decision: { userCode: string; userId: string; status: 'approved' | 'denied'; grant: DeviceGrant },
): Promise<DeviceLoginView | undefined> {
  const keyRole = decision.grant.kind === 'api_key' ? decision.grant.keyRole : null;
  const { rows } = await tx.query<ViewRow>(
    `UPDATE device_authorizations
     SET status = $3, tenant_id = $2, user_id = $4, decided_at = now(), grant_kind = $5, key_role = $6
     WHERE user_code = $1 AND status = 'pending' AND tenant_id IS NULL AND expires_at > now()
     RETURNING ${viewColumns}`,
    [decision.userCode, tenantId, decision.status, decision.userId, decision.grant.kind, keyRole],
  );
  return rows[0] ? toView(rows[0]) : undefined;
}

