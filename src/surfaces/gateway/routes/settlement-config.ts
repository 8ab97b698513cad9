// Settlement configuration (spec: Settlement configuration): admins set which rails the tenant funds with and
// where the money goes; admins, operators and auditors read it back. docs/rails.md describes every field.
import type { FastifyInstance } from 'fastify';
import type { Role } from '../../../credentials/roles.ts';
import { findSettlementConfig, upsertSettlementConfig } from '../../../db/settlement-config-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import {
  settlementConfigBodySchema,
  validateSettlementConfig,
  type SettlementConfig,
  type SettlementConfigBody,
} from '../../../rails/settlement-config.ts';

const readers: readonly Role[] = ['admin', 'operator', 'auditor'];
const path = '/v1/admin/settlement/config';

function present(environment: string, config: SettlementConfig) {
  return {
    object: 'settlement_config',
    environment,
    rails: config.rails,
    x402_address: config.x402_address,
    mpp_profile_id: config.mpp_profile_id,
    mpp_session_enabled: config.mpp_session_enabled,
    settlement_network_recipient: config.settlement_network_recipient,
    processor_destination: config.processor_destination,
    updated_at: config.updated_at ?? null,
  };
}

export async function settlementConfigRoutes(app: FastifyInstance): Promise<void> {
  // Replaces the whole configuration: a field left out is cleared, so what was sent is what is stored.
  app.put<{ Body: SettlementConfigBody }>(
    path,
    { config: { access: { roles: adminOnly } }, schema: { body: settlementConfigBodySchema } },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      const config = validateSettlementConfig(request.body, environment);
      const stored = await app.database.tenant(tenantId, (tx) => upsertSettlementConfig(tx, tenantId, config));
      return present(environment, stored);
    },
  );

  app.get(path, { config: { access: { roles: readers } } }, async (request) => {
    const { tenantId, environment } = principalOf(request);
    const config = await app.database.tenant(tenantId, (tx) => findSettlementConfig(tx, tenantId));
    if (!config) throw new ServiceError('settlement_config.not_found');
    return present(environment, config);
  });
}
