// A2A task contracts (docs/protocol.md#task-contracts): the tenant's intents as contracts, paged, and one by id
// (another tenant's id is 404, as an unknown one).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { TaskContract, TaskContractListQuery, TaskContractPage, TaskContractParams } from '../../../contracts/protocol.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { listTaskContracts, readTaskContract } from '../../../services/task-contract-service.ts';

const access = { roles: anyRole, scope: 'mcp.a2a:read' } as const;

export async function taskContractRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.get(
    '/protocol/v2/a2a/task-contracts',
    {
      config: { access },
      schema: {
        summary: 'List the tenant\'s task contracts, newest first',
        querystring: TaskContractListQuery,
        response: { 200: TaskContractPage, ...authenticatedErrors(404) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => listTaskContracts(tx, tenantId, request.query));
    },
  );

  routes.get(
    '/protocol/v2/a2a/task-contracts/:contract_id',
    {
      config: { access },
      schema: { summary: 'Read a task contract', params: TaskContractParams, response: { 200: TaskContract, ...authenticatedErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => readTaskContract(tx, tenantId, request.params.contract_id));
    },
  );
}
