// `svc tenant create`: a tenant and its first admin API key, on a fresh install before any key exists.
import { createTenant } from '../../services/tenant-service.ts';
import { print, requiredOption, UsageError, usageOf, withDatabase, type CliCommand } from '../command.ts';

export const tenantCreate: CliCommand = {
  name: 'tenant create',
  summary: 'Creates a tenant and its first admin API key (shown once).',
  synopsis: '--tenant-id ID --environment sandbox|live [--json]',
  details: [
    '--tenant-id ID          the tenant slug: lowercase letters, digits, ".", "_" and "-", at most 64',
    '--environment ENV       sandbox (simulated rails, friendly defaults) or live; fixed for good',
    '--json                  print {tenant_id, tenant_uuid, environment, api_key} as one JSON line',
  ],
  options: { 'tenant-id': { type: 'string' }, environment: { type: 'string' } },
  async run({ options, json, config }) {
    const tenantId = requiredOption(tenantCreate, options, 'tenant-id');
    const environment = requiredOption(tenantCreate, options, 'environment');
    if (environment !== 'sandbox' && environment !== 'live') throw new UsageError('--environment must be sandbox or live', usageOf(tenantCreate));
    const { tenant, adminKey } = await withDatabase(config, (database) => createTenant(database, tenantId, environment));
    print(
      json,
      { tenant_id: tenant.tenantId, tenant_uuid: tenant.tenantUuid, environment: tenant.environment, api_key: adminKey.apiKey },
      `tenant ${tenant.tenantId} (${tenant.environment}) created\nadmin API key (shown once): ${adminKey.apiKey}`,
    );
  },
};
