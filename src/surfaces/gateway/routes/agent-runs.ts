// Agent runs (docs/agent-runs.md): the public client's middleware registers a run (PUT) and reports its trace events
// (POST); the reads list an intent's runs and one run's events for the console's intent page.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  AgentRun,
  AgentRunBody,
  AgentRunList,
  AgentRunListQuery,
  AgentRunParams,
  AgentRunReadQuery,
  AgentRunTraceEventsAccepted,
  AgentRunTraceEventsBody,
  AgentRunWithEvents,
} from '../../../contracts/agent-runs.ts';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import { pageSizeMax } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { appendAgentRunTraceEvents, listAgentRuns, readAgentRun, registerAgentRun } from '../../../services/agent-run-service.ts';
import { spendRoles, spendScope } from './verify.ts';

/** The middleware reports with the key it spends with: the spending roles and scope of /verify. */
const reporters = { access: { roles: spendRoles, scope: spendScope } } as const;
/** Reading what agents did: every role, and restricted keys with the discovery scope, as the intent reads. */
const readers = { access: { roles: anyRole, scope: 'mcp.discovery:read' } } as const;

export async function agentRunRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.put(
    '/v1/agent-runs/:run_id',
    {
      config: reporters,
      schema: {
        summary: 'Register an agent run: one bind of an agent\'s tool middleware to an intent',
        params: AgentRunParams,
        body: AgentRunBody,
        response: { 200: AgentRun, ...authenticatedBodyErrors(404, 409, 422) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => registerAgentRun(tx, tenantId, request.params.run_id, request.body));
    },
  );

  routes.post(
    '/v1/agent-runs/:run_id/trace-events',
    {
      config: reporters,
      schema: {
        summary: 'Append trace events to an agent run, each stored once',
        params: AgentRunParams,
        body: AgentRunTraceEventsBody,
        response: { 200: AgentRunTraceEventsAccepted, ...authenticatedBodyErrors(404, 422) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => appendAgentRunTraceEvents(tx, tenantId, request.params.run_id, request.body));
    },
  );

  routes.get(
    '/v1/agent-runs',
    {
      config: readers,
      schema: { summary: 'The agent runs of an intent, oldest first', querystring: AgentRunListQuery, response: { 200: AgentRunList, ...authenticatedErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => listAgentRuns(tx, tenantId, request.query.intent_id));
    },
  );

  routes.get(
    '/v1/agent-runs/:run_id',
    {
      config: readers,
      schema: {
        summary: 'An agent run with a page of its trace events',
        params: AgentRunParams,
        querystring: AgentRunReadQuery,
        response: { 200: AgentRunWithEvents, ...authenticatedErrors(404) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const page = { afterSeq: request.query.after_seq ?? 0, limit: request.query.limit ?? pageSizeMax };
      return app.database.tenant(tenantId, (tx) => readAgentRun(tx, tenantId, request.params.run_id, page));
    },
  );
}
