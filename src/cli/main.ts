// `svc`: the operator CLI. Works on a fresh install before any API key exists, also while the server runs.
// Exit codes: 0 success, 1 the operation failed, 2 the command line is wrong.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { isRole, roles } from '../credentials/roles.ts';
import { findTenant } from '../db/tenant-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import { Database } from '../platform/database.ts';
import { migrate } from '../platform/migrate.ts';
import { issueApiKey } from '../services/api-key-service.ts';
import { createTenant } from '../services/tenant-service.ts';
import { openCliConnection } from './database-connection.ts';

const usage = `usage:
  svc tenant create --tenant-id ID --environment sandbox|live [--json]
  svc key create --tenant-id ID --role ${roles.join('|')} [--name NAME] [--scopes a,b] [--json]
  svc migrate [--json]

The database is DATABASE_URL, or the embedded one in SVC_DATA_DIR (default ./data).`;

class UsageError extends Error {}

type Options = Record<string, string | boolean | undefined>;

function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function print(json: boolean, value: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'tenant-id': { type: 'string' },
      environment: { type: 'string' },
      role: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const command = positionals.join(' ');
  if (values.help || command === '' || command === 'help') {
    process.stdout.write(`${usage}\n`);
    return;
  }
  if (!['tenant create', 'key create', 'migrate'].includes(command)) throw new UsageError(`unknown command "${command}"`);
  const json = values.json === true;
  const environment = command === 'tenant create' ? required(values, 'environment') : undefined;
  if (environment !== undefined && environment !== 'sandbox' && environment !== 'live') {
    throw new UsageError('--environment must be sandbox or live');
  }
  const role = command === 'key create' ? required(values, 'role') : undefined;
  if (role !== undefined && !isRole(role)) throw new UsageError(`--role must be one of ${roles.join(', ')}`);
  const tenantId = command === 'migrate' ? undefined : required(values, 'tenant-id');

  const config = loadConfig();
  const cli = await openCliConnection(config);
  try {
    const applied = await migrate(cli.connection);
    if (command === 'migrate') {
      print(json, { applied_versions: applied }, applied.length ? `applied migrations ${applied.join(', ')}` : 'up to date');
      return;
    }
    const database = new Database({ ...cli.connection, max: 2 });
    try {
      if (command === 'tenant create') {
        const { tenant, adminKey } = await createTenant(database, tenantId!, environment as 'sandbox' | 'live');
        print(
          json,
          { tenant_id: tenant.tenantId, tenant_uuid: tenant.tenantUuid, environment: tenant.environment, api_key: adminKey.apiKey },
          `tenant ${tenant.tenantId} (${tenant.environment}) created\nadmin API key (shown once): ${adminKey.apiKey}`,
        );
      } else {
        const issued = await database.system(async (tx) => {
          const tenant = await findTenant(tx, tenantId!);
          if (!tenant) throw new ServiceError('tenant.not_found', { details: { tenant_id: tenantId } });
          const scopes = typeof values.scopes === 'string' ? values.scopes.split(',').filter(Boolean) : undefined;
          return issueApiKey(tx, tenant, { role: role as (typeof roles)[number], name: values.name as string | undefined, scopes });
        });
        print(
          json,
          { key_id: issued.record.keyId, api_key: issued.apiKey, role: issued.record.role },
          `key ${issued.record.keyId} (${issued.record.role}) created\nAPI key (shown once): ${issued.apiKey}`,
        );
      }
    } finally {
      await database.close();
    }
  } finally {
    await cli.close();
  }
}

try {
  await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`svc: ${(error as Error).message}\n\n${usage}\n`);
    process.exitCode = 2;
  } else if (error instanceof ServiceError) {
    process.stderr.write(`svc: ${error.code}: ${error.message}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`svc: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
