// Settlement configuration (spec: Settlement configuration): admins set which rails the tenant funds with and
// where the money goes; admins, operators and auditors read it back. docs/rails.md describes every field.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import { SettlementConfigAnswer, SettlementConfigBody } from '../../../contracts/settlement-config.ts';
import type { Role } from '../../../credentials/roles.ts';
import { findSettlementConfig, openRailSecrets, sealSecretChanges, upsertSettlementConfig } from '../../../db/settlement-config-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import {
  railSecretFields,
  secretChangesOf,
  validateSettlementConfig,
  type SettlementConfig,
} from '../../../rails/settlement-config.ts';
import { liveAdapterFor, type RailSecrets } from '../../../rails/index.ts';

const readers: readonly Role[] = ['admin', 'operator', 'auditor'];
const path = '/v1/admin/settlement/config';

function present(environment: SettlementConfigAnswer['environment'], config: SettlementConfig): SettlementConfigAnswer {
  return {
    object: 'settlement_config' as const,
    environment,
    rails: config.rails,
    x402_address: config.x402_address,
    mpp_profile_id: config.mpp_profile_id,
    mpp_session_enabled: config.mpp_session_enabled,
    settlement_network_recipient: config.settlement_network_recipient,
    processor_destination: config.processor_destination,
    x402_facilitator_url: config.x402_facilitator_url,
    x402_facilitator_api_key_set: config.x402_facilitator_api_key_set,
    mpp_processor_url: config.mpp_processor_url,
    mpp_processor_secret_key_set: config.mpp_processor_secret_key_set,
    updated_at: config.updated_at ?? null,
  };
}

export async function settlementConfigRoutes(app: FastifyInstance): Promise<void> {
  // Replaces the whole configuration: a field left out is cleared, so what was sent is what is stored; except the
  // write-only secrets, which a body that leaves them out keeps (null clears them).
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.put(
    path,
    {
      config: { access: { roles: adminOnly } },
      schema: {
        summary: "Replace the tenant's settlement configuration",
        body: SettlementConfigBody,
        response: { 200: SettlementConfigAnswer, ...authenticatedBodyErrors() },
      },
    },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      const config = validateSettlementConfig(request.body, environment);
      const changes = secretChangesOf(request.body);
      const { secretBox, callTimeoutMs } = app.railRuntime;
      if (!secretBox && railSecretFields.some((field) => typeof changes[field] === 'string')) {
        throw new ServiceError('settlement_config.secrets_key_missing', { details: { fields: railSecretFields.filter((field) => typeof changes[field] === 'string') } });
      }
      if (environment === 'live') {
        // The dry call runs with no transaction open: the secrets it uses are the ones this write leaves stored.
        const before = await app.database.tenant(tenantId, (tx) => findSettlementConfig(tx, tenantId));
        const kept = railSecretFields.some((field) => changes[field] === undefined && before?.sealedSecrets[field])
          ? openStoredSecrets(secretBox, tenantId, before)
          : { x402_facilitator_api_key: null, mpp_processor_secret_key: null };
        const secrets: RailSecrets = {
          x402_facilitator_api_key: changes.x402_facilitator_api_key === undefined ? kept.x402_facilitator_api_key : changes.x402_facilitator_api_key,
          mpp_processor_secret_key: changes.mpp_processor_secret_key === undefined ? kept.mpp_processor_secret_key : changes.mpp_processor_secret_key,
        };
        await probeLiveRails(config, secrets, callTimeoutMs);
      }
      const sealed = sealSecretChanges(secretBox, tenantId, changes);
      const stored = await app.database.tenant(tenantId, (tx) => upsertSettlementConfig(tx, tenantId, config, sealed));
      return present(environment, stored);
    },
  );

  routes.get(path, {
    config: { access: { roles: readers } },
    schema: { summary: "Read the tenant's settlement configuration", response: { 200: SettlementConfigAnswer, ...authenticatedErrors(404) } },
  }, async (request) => {
    const { tenantId, environment } = principalOf(request);
    const config = await app.database.tenant(tenantId, (tx) => findSettlementConfig(tx, tenantId));
    if (!config) throw new ServiceError('settlement_config.not_found');
    return present(environment, config);
  });
}

/** Stored secrets, opened; a deployment that lost its key answers 503 rather than probing without them. */
function openStoredSecrets(box: Parameters<typeof openRailSecrets>[0], tenantId: string, stored: Parameters<typeof openRailSecrets>[2]): RailSecrets {
  if (!box) throw new ServiceError('settlement_config.secrets_key_missing', { details: { fields: railSecretFields.filter((field) => stored?.sealedSecrets[field]) } });
  return openRailSecrets(box, tenantId, stored);
}

/** The dry call of each configured live rail (its adapter's probe), naming the field at fault, and nothing is saved:
 * a rail that could not be reached or failed on its side is a 503 with Retry-After (the same request may pass in a
 * moment), a rail that refused the configuration a 400. A rail without an endpoint is not probed (it cannot fund
 * until one is set; the fund route says so). */
async function probeLiveRails(config: SettlementConfig, secrets: RailSecrets, callTimeoutMs: number): Promise<void> {
  for (const rail of config.rails) {
    const endpoint = rail === 'x402_usdc_base' ? config.x402_facilitator_url : config.mpp_processor_url;
    if (!endpoint) continue;
    const adapter = await liveAdapterFor(rail, { settlementRail: rail, config, secrets, callTimeoutMs });
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
