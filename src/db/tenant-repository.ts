// Tenants: the realm slug `tenant_id`, its UUID and its fixed environment.
import { randomUUID } from 'node:crypto';
import type { Environment } from '../credentials/api-key.ts';
import type { Queryable } from '../infra/database.ts';

export interface Tenant {
  readonly tenantId: string;
  readonly tenantUuid: string;
  readonly environment: Environment;
  readonly createdAt: Date;
}

interface TenantRow {
  tenant_id: string;
  tenant_uuid: string;
  environment: Environment;
  created_at: Date;
}

const toTenant = (row: TenantRow): Tenant => ({
  tenantId: row.tenant_id,
  tenantUuid: row.tenant_uuid,
  environment: row.environment,
  createdAt: row.created_at,
});

/** Creates a tenant; throws a unique violation (constraint `tenants_pkey`) when the id is taken. */
export async function insertTenant(tx: Queryable, tenantId: string, environment: Environment): Promise<Tenant> {
  const { rows } = await tx.query<TenantRow>(
    `INSERT INTO tenants (tenant_id, tenant_uuid, environment) VALUES ($1, $2, $3)
     RETURNING tenant_id, tenant_uuid, environment, created_at`,
    [tenantId, randomUUID(), environment],
  );
  return toTenant(rows[0]!);
}

export async function findTenant(tx: Queryable, tenantId: string): Promise<Tenant | undefined> {
  const { rows } = await tx.query<TenantRow>(
    'SELECT tenant_id, tenant_uuid, environment, created_at FROM tenants WHERE tenant_id = $1',
    [tenantId],
  );
  return rows[0] && toTenant(rows[0]);
}
