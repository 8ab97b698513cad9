// `svc user create`: adds a person to a tenant with a role; they sign in with a code mailed to their address.
import { isRole, roles } from '../../credentials/roles.ts';
import { createUser } from '../../services/user-service.ts';
import { print, requiredOption, UsageError, usageOf, withDatabase, type CliCommand } from '../command.ts';

export const userCreate: CliCommand = {
  name: 'user create',
  summary: 'Adds a person to a tenant with a role; they sign in with a code mailed to them.',
  synopsis: `--tenant-id ID --email E --role ${roles.join('|')} [--json]`,
  details: [
    '--tenant-id ID          the tenant to add them to',
    '--email E               their address; sign-in codes go there',
    `--role ROLE             ${roles.join(', ')}`,
    '--json                  print {user_id, email, tenant_id, role} as one JSON line',
  ],
  options: { 'tenant-id': { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
  async run({ options, json, config }) {
    const tenantId = requiredOption(userCreate, options, 'tenant-id');
    const email = requiredOption(userCreate, options, 'email');
    const role = requiredOption(userCreate, options, 'role');
    if (!isRole(role)) throw new UsageError(`--role must be one of ${roles.join(', ')}`, usageOf(userCreate));
    const created = await withDatabase(config, (database) => createUser(database, { tenantId, email, role }));
    print(
      json,
      { user_id: created.userId, email: created.email, tenant_id: created.tenantId, role: created.role },
      `user ${created.userId} <${created.email}> added to ${created.tenantId} as ${created.role}; they sign in with their email`,
    );
  },
};
