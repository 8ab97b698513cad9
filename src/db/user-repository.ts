// People and their tenant memberships (migrations/0008_users.sql). A user is global (found by email, through the
// system role, before any tenant is known); a membership belongs to its tenant and carries the person's role there.
import type { Environment } from '../credentials/api-key.ts';
import type { Role } from '../credentials/roles.ts';
import type { Queryable } from '../infra/database.ts';

export interface User {
  readonly userId: string;
  readonly email: string;
  readonly createdAt: Date;
}

export interface Membership {
  readonly tenantId: string;
  readonly userId: string;
  readonly role: Role;
}

/** A membership with what a Principal needs of its tenant. */
export interface SessionMembership extends Membership {
  readonly tenantUuid: string;
  readonly environment: Environment;
}

interface UserRow {
  user_id: string;
  email: string;
  created_at: Date;
}

const toUser = (row: UserRow): User => ({ userId: row.user_id, email: row.email, createdAt: row.created_at });

/** By normalized (lowercased) email; system role only. */
export async function findUserByEmail(systemTx: Queryable, email: string): Promise<User | undefined> {
  const { rows } = await systemTx.query<UserRow>('SELECT user_id, email, created_at FROM users WHERE email = $1', [email]);
  return rows[0] && toUser(rows[0]);
}

/** Creates the user unless one has this email already, and answers the one that exists afterwards either way
 * (two concurrent creations of the same person agree on one identity). */
export async function ensureUser(systemTx: Queryable, userId: string, email: string): Promise<User> {
  const inserted = await systemTx.query<UserRow>(
    'INSERT INTO users (user_id, email) VALUES ($1, $2) ON CONFLICT (email) DO NOTHING RETURNING user_id, email, created_at',
    [userId, email],
  );
  if (inserted.rows[0]) return toUser(inserted.rows[0]);
  // ON CONFLICT waited for any concurrent insert to commit; this new statement (read committed) sees its row.
  const existing = await findUserByEmail(systemTx, email);
  if (!existing) throw new Error('ensureUser: the conflicting user row is not visible');
  return existing;
}

/** Throws a unique violation (constraint `tenant_memberships_pkey`) when the person is already a member. */
export async function insertMembership(tx: Queryable, tenantId: string, userId: string, role: Role): Promise<Membership> {
  await tx.query('INSERT INTO tenant_memberships (tenant_id, user_id, role) VALUES ($1, $2, $3)', [tenantId, userId, role]);
  return { tenantId, userId, role };
}

/** Every tenant a person belongs to, in tenant id order, at most `limit`; system role (spans tenants). */
export async function listMembershipsOfUser(systemTx: Queryable, userId: string, limit: number): Promise<Membership[]> {
  const { rows } = await systemTx.query<{ tenant_id: string; user_id: string; role: Role }>(
    'SELECT tenant_id, user_id, role FROM tenant_memberships WHERE user_id = $1 ORDER BY tenant_id LIMIT $2',
    [userId, limit],
  );
  return rows.map((row) => ({ tenantId: row.tenant_id, userId: row.user_id, role: row.role }));
}

/** One membership, by tenant and user. */
export async function findMembership(tx: Queryable, tenantId: string, userId: string): Promise<Membership | undefined> {
  const { rows } = await tx.query<{ tenant_id: string; user_id: string; role: Role }>(
    'SELECT tenant_id, user_id, role FROM tenant_memberships WHERE tenant_id = $1 AND user_id = $2',
    [tenantId, userId],
  );
  return rows[0] && { tenantId: rows[0].tenant_id, userId: rows[0].user_id, role: rows[0].role };
}

/** True when the person belongs to at least one tenant; system role. */
export async function hasAnyMembership(systemTx: Queryable, userId: string): Promise<boolean> {
  const { rows } = await systemTx.query('SELECT 1 FROM tenant_memberships WHERE user_id = $1 LIMIT 1', [userId]);
  return rows.length > 0;
}

/** The membership behind a session token, read inside the token's tenant (row-level security applies). */
export async function findSessionMembership(tx: Queryable, tenantId: string, userId: string): Promise<SessionMembership | undefined> {
  const { rows } = await tx.query<{ tenant_id: string; user_id: string; role: Role; tenant_uuid: string; environment: Environment }>(
    `SELECT m.tenant_id, m.user_id, m.role, t.tenant_uuid, t.environment
     FROM tenant_memberships m JOIN tenants t ON t.tenant_id = m.tenant_id
     WHERE m.tenant_id = $1 AND m.user_id = $2`,
    [tenantId, userId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return { tenantId: row.tenant_id, userId: row.user_id, role: row.role, tenantUuid: row.tenant_uuid, environment: row.environment };
}
