// `svc key create`: issues an API key for a tenant, optionally restricted to scopes.
import { knownScopes, normalizeScopes, scopePresets } from '../../credentials/mcp-scopes.ts';
import { isRole, roles, type Role } from '../../credentials/roles.ts';
import { findTenant } from '../../db/tenant-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { issueApiKey } from '../../services/api-key-service.ts';
import { print, requiredOption, UsageError, usageOf, withDatabase, type CliCommand } from '../command.ts';
import { closestMatches, didYouMean } from '../suggestions.ts';

/** The scopes of `--scopes a,b`, each a catalogue scope or a preset, checked before the database is opened. An
 * unknown one is refused as the API refuses it (`api_key.scope_unknown`, exit 1), naming it, with the closest known
 * ones and, in the details, every scope and preset there is. */
function scopesOf(list: string): string[] {
  const scopes = list.split(',').map((scope) => scope.trim()).filter(Boolean);
  if (scopes.length === 0) throw new UsageError('--scopes needs at least one scope or preset', usageOf(keyCreate));
  try {
    normalizeScopes(scopes);
  } catch (error) {
    if (!(error instanceof ServiceError) || error.code !== 'api_key.scope_unknown') throw error;
    const unknown = (error.details?.['unknown_scopes'] ?? []) as string[];
    const suggestions = unknown.flatMap((scope) => closestMatches(scope, [...knownScopes(), ...scopePresets.map((preset) => preset.id)]));
    const named = unknown.map((scope) => `"${scope}"`).join(', ');
    throw new ServiceError('api_key.scope_unknown', {
      message: `unknown scope${unknown.length > 1 ? 's' : ''} ${named}: neither a catalogue scope at an allowed level nor a preset${didYouMean(suggestions)}`,
      details: { ...error.details, ...(suggestions.length > 0 ? { did_you_mean: suggestions } : {}) },
    });
  }
  return scopes;
}

export const keyCreate: CliCommand = {
  name: 'key create',
  summary: 'Issues an API key for a tenant (shown once); with --scopes a restricted svc_rk_… key.',
  synopsis: `--tenant-id ID --role ${roles.join('|')} [--name NAME] [--scopes a,b] [--json]`,
  details: [
    '--tenant-id ID          the tenant the key acts for',
    `--role ROLE             ${roles.join(', ')} (docs/roles.md)`,
    '--name NAME             a label shown in key lists',
    '--scopes a,b            restrict the key to these scopes (or presets of scopes): mcp.spend:write, mcp-readonly, …',
    `                        presets: ${scopePresets.map((preset) => preset.id).join(', ')} (docs/mcp.md)`,
    '--json                  print {key_id, api_key, role, key_kind, scopes} as one JSON line',
  ],
  options: { 'tenant-id': { type: 'string' }, role: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' } },
  async run({ options, json, config }) {
    const tenantId = requiredOption(keyCreate, options, 'tenant-id');
    const role = requiredOption(keyCreate, options, 'role');
    if (!isRole(role)) throw new UsageError(`--role must be one of ${roles.join(', ')}`, usageOf(keyCreate));
    const scopes = typeof options.scopes === 'string' ? scopesOf(options.scopes) : undefined;
    const name = typeof options.name === 'string' ? options.name : undefined;
    const issued = await withDatabase(config, (database) =>
      database.system(async (tx) => {
        const tenant = await findTenant(tx, tenantId);
        if (!tenant) throw new ServiceError('tenant.not_found', { details: { tenant_id: tenantId } });
        return issueApiKey(tx, tenant, { role: role as Role, ...(name ? { name } : {}), ...(scopes ? { scopes } : {}) });
      }),
    );
    const { record } = issued;
    const scopesText = record.scopes.length > 0 ? `, scopes ${record.scopes.join(', ')}` : '';
    print(
      json,
      // The scopes as stored, presets expanded: what the key may actually do.
      { key_id: record.keyId, api_key: issued.apiKey, role: record.role, key_kind: record.kind, scopes: record.scopes },
      `key ${record.keyId} (${record.role}, ${record.kind}${scopesText}) created\nAPI key (shown once): ${issued.apiKey}`,
    );
  },
};
