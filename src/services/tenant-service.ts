// Creating a tenant together with its first admin key, in one transaction: a tenant never exists without a way in.
import type { Environment } from '../credentials/api-key.ts';
import { insertTenant, type Tenant } from '../db/tenant-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import { tenantIdLengthMax, tenantIdPattern } from '../limits.ts';
import { isUniqueViolation, type Database } from '../infra/database.ts';
import { issueApiKey, type IssuedApiKey } from './api-key-service.ts';

export function isValidTenantId(tenantId: string): boolean {
  return tenantId.length >= 1 && tenantId.length <= tenantIdLengthMax && tenantIdPattern.test(tenantId);
}

export async function createTenant(
  database: Database,
  tenantId: string,
  environment: Environment,
): Promise<{ tenant: Tenant; adminKey: IssuedApiKey }> {
  if (!isValidTenantId(tenantId)) throw new ServiceError('tenant.id_invalid', { details: { tenant_id: tenantId } });
  try {
    return await database.system(async (tx) => {
      const tenant = await insertTenant(tx, tenantId, environment);
      const adminKey = await issueApiKey(tx, tenant, { role: 'admin', name: 'initial admin key' });
      return { tenant, adminKey };
    });
  } catch (error) {
    if (isUniqueViolation(error, 'tenants_pkey')) throw new ServiceError('tenant.already_exists', { details: { tenant_id: tenantId } });
    throw error;
  }
}
