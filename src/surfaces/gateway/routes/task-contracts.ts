// A2A task contracts (docs/protocol.md#task-contracts): the tenant's intents as contracts, paged, and one by id
// (another tenant's id is 404, as an unknown one).
import type { FastifyInstance } from 'fastify';
import { pageSizeDefault, pageSizeMax } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { listTaskContracts, readTaskContract } from '../../../services/task-contract-service.ts';

const access = { roles: anyRole, scope: 'mcp.a2a:read' } as const;
const contractId = { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' } as const;

export async function taskContractRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/protocol/v2/a2a/task-contracts',
    {
      config: { access },
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault }, cursor: contractId },
        },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => listTaskContracts(tx, tenantId, request.query));
    },
  );

  app.get<{ Params: { contract_id: string } }>(
    '/protocol/v2/a2a/task-contracts/:contract_id',
    { config: { access }, schema: { params: { type: 'object', required: ['contract_id'], properties: { contract_id: contractId } } } },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => readTaskContract(tx, tenantId, request.params.contract_id));
    },
  );
}
