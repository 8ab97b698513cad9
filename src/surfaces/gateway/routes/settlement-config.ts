// Settlement configuration (spec: Settlement configuration): admins set which rails the tenant funds with and
// where the money goes; admins, operators and auditors read it back. docs/rails.md describes every field; the body
// and answer are every registered rail's fields (src/rails/settlement-config.ts), read when the app is built.
import type { FastifyInstance } from 'fastify';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import type { SettlementConfigBody } from '../../../contracts/settlement-config.ts';
import type { Role } from '../../../credentials/roles.ts';
import {
  findSettlementConfig,
  openRailSecrets,
  sealSecretChanges,
  upsertSettlementConfig,
  type StoredSettlementConfig,
} from '../../../db/settlement-config-repository.ts';
import { recordEvent } from '../../../db/event-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import type { SecretBox } from '../../../infra/secret-box.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import { liveAdapterFor, type RailName, type RailSecrets } from '../../../rails/index.ts';
import {
  presentSettlementConfig,
  railFields,
  secretChangesOf,
  secretsAfter,
  settlementConfigSchemas,
  validateSettlementConfig,
  type SettlementConfigInput,
} from '../../../rails/settlement-config.ts';
import { settingsOf, textSetting } from '../../../rails/settings.ts';

const readers: readonly Role[] = ['admin', 'operator', 'auditor'];
const path = '/v1/admin/settlement/config';

export async function settlementConfigRoutes(app: FastifyInstance): Promise<void> {
  const schemas = settlementConfigSchemas();
  // Replaces the whole configuration: a field left out is cleared, so what was sent is what is stored; except the
  // write-only secrets, which a body that leaves them out keeps (null clears them).
  app.put<{ Body: SettlementConfigBody }>(
    path,
    {
      config: { access: { roles: adminOnly } },
      schema: {
        summary: "Replace the tenant's settlement configuration",
        body: schemas.body,
        response: { 200: schemas.answer, ...authenticatedBodyErrors() },
      },
    },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      const config = validateSettlementConfig(request.body, environment);
      const changes = secretChangesOf(request.body);
      const { secretBox, callTimeoutMs } = app.railRuntime;
      const replaced = changes.filter((change) => typeof change.value === 'string').map((change) => change.field);
      if (!secretBox && replaced.length > 0) throw new ServiceError('settlement_config.secrets_key_missing', { details: { fields: replaced } });
      if (environment === 'live') {
        // The dry call runs with no transaction open: the secrets it uses are the ones this write leaves stored.
        const before = await app.database.tenant(tenantId, (tx) => findSettlementConfig(tx, tenantId));
        const kept = before?.sealedSecrets.some(({ rail, field }) => !changes.some((change) => change.rail === rail && change.field === field))
          ? openStoredSecrets(secretBox, tenantId, before)
          : {};
        await probeLiveRails(config, secretsAfter(kept, changes), callTimeoutMs);
      }
      const sealed = sealSecretChanges(secretBox, tenantId, changes);
      const answer = await app.database.tenant(tenantId, async (tx) => {
        const shown = presentSettlementConfig(environment, await upsertSettlementConfig(tx, tenantId, config, sealed));
        recordEvent(tx, tenantId, { type: 'settlement_config.updated', object: shown });
        return shown;
      });
      return answer;
    },
  );

  app.get(path, {
    config: { access: { roles: readers } },
    schema: { summary: "Read the tenant's settlement configuration", response: { 200: schemas.answer, ...authenticatedErrors(404) } },
  }, async (request) => {
    const { tenantId, environment } = principalOf(request);
    const config = await app.database.tenant(tenantId, (tx) => findSettlementConfig(tx, tenantId));
    if (!config) throw new ServiceError('settlement_config.not_found');
    return presentSettlementConfig(environment, config);
  });
}

/** Stored secrets, opened; a deployment that lost its key answers 503 rather than probing without them. */
function openStoredSecrets(box: SecretBox | undefined, tenantId: string, stored: StoredSettlementConfig): Record<RailName, RailSecrets> {
  if (!box) throw new ServiceError('settlement_config.secrets_key_missing', { details: { fields: stored.sealedSecrets.map(({ field }) => field) } });
  return openRailSecrets(box, tenantId, stored);
}

/** The dry call of each configured live rail (its adapter's probe), naming the field at fault, and nothing is saved:
 * a rail that could not be reached or failed on its side is a 503 with Retry-After (the same request may pass in a
 * moment), a rail that refused the configuration a 400. A rail without an endpoint is not probed (it cannot fund
 * until one is set; the fund route says so). */
async function probeLiveRails(config: SettlementConfigInput, secrets: Record<RailName, RailSecrets>, callTimeoutMs: number): Promise<void> {
  for (const rail of config.rails) {
    const settings = settingsOf(config, rail);
    const endpoints = railFields().filter((entry) => entry.rail === rail && entry.field.kind === 'endpoint');
    if (!endpoints.some(({ field }) => textSetting(settings, field.name) !== null)) continue;
    const adapter = await liveAdapterFor(rail, { settlementRail: rail, settings, secrets: secrets[rail] ?? {}, callTimeoutMs });
    if (!adapter) continue;
    const result = await adapter.probe();
    if (!result.ok) {
      throw new ServiceError(result.transient ? 'settlement_config.rail_unreachable' : 'settlement_config.rail_refused', {
        message: `The ${rail} rail's dry call failed: ${result.reason}.`,
        details: { settlement_rail: rail, field: result.field, reason: result.reason },
      });
    }
  }
}
