// `svc`: the operator CLI. Works on a fresh install before any API key exists, also while the server runs.
// Exit codes: 0 success, 1 the operation failed, 2 the command line is wrong.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.ts';
import { isRole, roles, type Role } from '../credentials/roles.ts';
import { findTenant } from '../db/tenant-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import { Database } from '../platform/database.ts';
import {
  defaultKeyFilePath,
  GatewayKeyError,
  GatewayKeyring,
  readKeyFile,
  removeFromKeyFile,
  rotateKeyFile,
  stageKeyFile,
  writeKeyFile,
  type KeyFile,
} from '../platform/gateway-keys.ts';
import { migrate } from '../platform/migrate.ts';
import { issueApiKey } from '../services/api-key-service.ts';
import { verifyAuditBundle } from '../services/audit-bundle.ts';
import { verifyTenantLedger, type LedgerVerifyReport } from '../services/ledger-verifier.ts';
import { takeOutboxCode } from '../services/sign-in-service.ts';
import { createTenant } from '../services/tenant-service.ts';
import { createUser } from '../services/user-service.ts';
import { openCliConnection } from './database-connection.ts';

const usage = `usage:
  svc tenant create --tenant-id ID --environment sandbox|live [--json]
  svc key create --tenant-id ID --role ${roles.join('|')} [--name NAME] [--scopes a,b] [--json]
  svc user create --tenant-id ID --email E --role ${roles.join('|')} [--json]
  svc auth outbox --email E [--json]    (the latest undelivered sign-in code; only without SMTP_URL)
  svc migrate [--json]
  svc ledger verify --tenant-id ID [--json]    (exit 1 when the ledger has a problem)
  svc audit verify --bundle FILE [--public-key HEX] [--json]    (offline; exit 1 when the bundle has a problem)
  svc signing-key stage|rotate [--json]
  svc signing-key retire --kid KID [--json]

The database is DATABASE_URL, or the embedded one in SVC_DATA_DIR (default ./data).
Signing keys live in SVC_SIGNING_KEY_FILE (default SVC_DATA_DIR/signing-keys.json); restart the server after a change.`;

class UsageError extends Error {}

type Options = Record<string, string | boolean | undefined>;

interface Invocation {
  readonly options: Options;
  readonly json: boolean;
  readonly config: Config;
}

function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function print(json: boolean, value: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/** Opens the database, brings it up to date, runs `work`, and closes everything. */
async function withDatabase<T>(config: Config, work: (database: Database) => Promise<T>): Promise<T> {
  const cli = await openCliConnection(config);
  try {
    await migrate(cli.connection);
    const database = new Database({ ...cli.connection, max: 2 });
    try {
      return await work(database);
    } finally {
      await database.close();
    }
  } finally {
    await cli.close();
  }
}

async function tenantCreate({ options, json, config }: Invocation): Promise<void> {
  const tenantId = required(options, 'tenant-id');
  const environment = required(options, 'environment');
  if (environment !== 'sandbox' && environment !== 'live') throw new UsageError('--environment must be sandbox or live');
  const { tenant, adminKey } = await withDatabase(config, (database) => createTenant(database, tenantId, environment));
  print(
    json,
    { tenant_id: tenant.tenantId, tenant_uuid: tenant.tenantUuid, environment: tenant.environment, api_key: adminKey.apiKey },
    `tenant ${tenant.tenantId} (${tenant.environment}) created\nadmin API key (shown once): ${adminKey.apiKey}`,
  );
}

async function keyCreate({ options, json, config }: Invocation): Promise<void> {
  const tenantId = required(options, 'tenant-id');
  const role = required(options, 'role');
  if (!isRole(role)) throw new UsageError(`--role must be one of ${roles.join(', ')}`);
  const scopes = typeof options.scopes === 'string' ? options.scopes.split(',').filter(Boolean) : undefined;
  const name = typeof options.name === 'string' ? options.name : undefined;
  const issued = await withDatabase(config, (database) =>
    database.system(async (tx) => {
      const tenant = await findTenant(tx, tenantId);
      if (!tenant) throw new ServiceError('tenant.not_found', { details: { tenant_id: tenantId } });
      return issueApiKey(tx, tenant, { role: role as Role, ...(name ? { name } : {}), ...(scopes ? { scopes } : {}) });
    }),
  );
  print(
    json,
    { key_id: issued.record.keyId, api_key: issued.apiKey, role: issued.record.role },
    `key ${issued.record.keyId} (${issued.record.role}) created\nAPI key (shown once): ${issued.apiKey}`,
  );
}

async function userCreate({ options, json, config }: Invocation): Promise<void> {
  const tenantId = required(options, 'tenant-id');
  const email = required(options, 'email');
  const role = required(options, 'role');
  if (!isRole(role)) throw new UsageError(`--role must be one of ${roles.join(', ')}`);
  const created = await withDatabase(config, (database) => createUser(database, { tenantId, email, role }));
  print(
    json,
    { user_id: created.userId, email: created.email, tenant_id: created.tenantId, role: created.role },
    `user ${created.userId} <${created.email}> added to ${created.tenantId} as ${created.role}; they sign in with their email`,
  );
}

/** Prints (once) the newest sign-in code waiting for an email. The outbox is filled only when no SMTP transport is
 * configured, so with SMTP_URL set this refuses rather than print nothing useful. */
async function authOutbox({ options, json, config }: Invocation): Promise<void> {
  const email = required(options, 'email');
  if (config.smtpUrl) throw new Error('SMTP_URL is set: sign-in codes are mailed, not kept in the local outbox');
  const message = await withDatabase(config, (database) => takeOutboxCode(database, email));
  if (!message) throw new Error(`no undelivered sign-in code for ${email} (ask for one with POST /v1/public/auth/login/start)`);
  print(
    json,
    { email: message.email, challenge_id: message.challengeId, code: message.code },
    `sign-in code for ${message.email}: ${message.code} (challenge ${message.challengeId})`,
  );
}

async function migrateCommand({ json, config }: Invocation): Promise<void> {
  const cli = await openCliConnection(config);
  try {
    const applied = await migrate(cli.connection);
    print(json, { applied_versions: applied }, applied.length ? `applied migrations ${applied.join(', ')}` : 'up to date');
  } finally {
    await cli.close();
  }
}

/** Escrow accounts are one per intent, so the text form sums them; --json lists every account. */
function ledgerReportText(report: LedgerVerifyReport): string {
  const lines = [`ledger of ${report.tenantId}: ${report.rows} rows, ${report.transactions} transactions, tip ${report.tipSeq} ${report.tipRowHashHex}`];
  let escrowCents = 0;
  let escrowAccounts = 0;
  for (const [account, cents] of Object.entries(report.balances)) {
    if (/^intent:.*:escrow$/.test(account)) {
      escrowCents += cents;
      escrowAccounts += 1;
    } else {
      lines.push(`  ${account}  ${cents}`);
    }
  }
  lines.push(`  escrow (${escrowAccounts} intents)  ${escrowCents}`);
  lines.push(report.ok ? 'ok: no problems found' : `${report.problems.length} problem(s):`, ...report.problems.map((problem) => `  - ${problem}`));
  return lines.join('\n');
}

async function ledgerVerify({ options, json, config }: Invocation): Promise<void> {
  const tenantId = required(options, 'tenant-id');
  const report = await withDatabase(config, (database) => verifyTenantLedger(database, tenantId));
  print(
    json,
    {
      tenant_id: report.tenantId,
      ok: report.ok,
      rows: report.rows,
      transactions: report.transactions,
      tip_seq: report.tipSeq,
      tip_row_hash_hex: report.tipRowHashHex,
      problems: report.problems,
      balances: report.balances,
    },
    ledgerReportText(report),
  );
  if (!report.ok) process.exitCode = 1;
}

/** Offline: no database, no network. Without --public-key the manifest is checked against its own embedded key,
 * which proves integrity only; pin the gateway key (GET /harbor/ledger/v1/authority) to prove origin. */
async function auditVerify({ options, json }: Invocation): Promise<void> {
  const bundlePath = required(options, 'bundle');
  const publicKeyHex = typeof options['public-key'] === 'string' ? options['public-key'].toLowerCase() : undefined;
  const report = verifyAuditBundle(new Uint8Array(fs.readFileSync(bundlePath)), { publicKeyHex });
  const keyText = report.keySource === 'given' ? 'the given public key' : `the manifest's embedded key ${report.signingPublicKeyHex ?? '(unreadable)'} (not pinned: pass --public-key to check origin)`;
  const lines = [
    `bundle ${bundlePath}: job ${report.jobId ?? '?'} of ${report.tenantId ?? '?'}, ${report.files} files, ${report.ledgerRows} ledger rows, checkpoint seq ${report.checkpointLedgerSeq ?? '?'}`,
    `manifest checked against ${keyText}`,
    report.ok ? 'ok: no problems found' : `${report.problems.length} problem(s):`,
    ...report.problems.map((problem) => `  - ${problem}`),
  ];
  print(
    json,
    {
      ok: report.ok,
      key_source: report.keySource,
      signing_public_key_hex: report.signingPublicKeyHex,
      tenant_realm_id: report.tenantId,
      job_id: report.jobId,
      files: report.files,
      ledger_rows: report.ledgerRows,
      checkpoint_last_ledger_seq: report.checkpointLedgerSeq,
      problems: report.problems,
    },
    lines.join('\n'),
  );
  if (!report.ok) process.exitCode = 1;
}

function signingKeyCommand(change: (file: KeyFile, options: Options) => KeyFile) {
  return async ({ options, json, config }: Invocation): Promise<void> => {
    if (config.signingKeysJson) throw new GatewayKeyError('the keys come from SVC_SIGNING_KEYS; change that variable instead');
    const filePath = config.signingKeyFile ?? defaultKeyFilePath(config.dataDir);
    const changed = change(readKeyFile(filePath), options);
    new GatewayKeyring(changed); // Refuse to write a key set the server could not load.
    writeKeyFile(filePath, changed);
    const summary = changed.keys.map((key) => ({ kid: key.kid, status: key.status }));
    print(json, { key_file: filePath, keys: summary }, summary.map((key) => `${key.kid}  ${key.status}`).join('\n'));
  };
}

const commands: Record<string, (invocation: Invocation) => Promise<void>> = {
  'tenant create': tenantCreate,
  'key create': keyCreate,
  'user create': userCreate,
  'auth outbox': authOutbox,
  migrate: migrateCommand,
  'ledger verify': ledgerVerify,
  'audit verify': auditVerify,
  'signing-key stage': signingKeyCommand((file) => stageKeyFile(file)),
  'signing-key rotate': signingKeyCommand((file) => rotateKeyFile(file)),
  'signing-key retire': signingKeyCommand((file, options) => removeFromKeyFile(file, required(options, 'kid'))),
};

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
      kid: { type: 'string' },
      email: { type: 'string' },
      bundle: { type: 'string' },
      'public-key': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const commandName = positionals.join(' ');
  if (values.help || commandName === '' || commandName === 'help') {
    process.stdout.write(`${usage}\n`);
    return;
  }
  const command = commands[commandName];
  if (!command) throw new UsageError(`unknown command "${commandName}"`);
  await command({ options: values, json: values.json === true, config: loadConfig() });
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
