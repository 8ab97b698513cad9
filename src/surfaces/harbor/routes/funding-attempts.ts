// GET /harbor/funding-attempts: the tenant's funding attempts (each 402 challenge issued and what became of the
// credential that answered it), most recently changed first, so an operator sees declined payments without reading
// every intent (docs/engine.md "Funding attempts"). Same readers as the intents.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { FundingAttemptList, FundingAttemptListQuery, type FundingAttempt } from '../../../contracts/funding-attempts.ts';
import { listFundingAttempts, type FundingAttemptSummary } from '../../../db/funding-attempt-repository.ts';
import { pageSizeDefault } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { intentReaders } from './intents.ts';

/** An attempt as the API shows it: never the credential (only its digest is kept) nor the stored challenge. */
function presentAttempt(tenantId: string, attempt: FundingAttemptSummary): FundingAttempt {
  return {
    object: 'funding_attempt' as const,
    tenant_id: tenantId,
    attempt_id: attempt.attemptId,
    intent_id: attempt.intentId,
    settlement_rail: attempt.rail,
    status: attempt.status,
    polls: attempt.polls,
    created_at: attempt.createdAt.toISOString(),
    updated_at: attempt.updatedAt.toISOString(),
  };
}

export async function fundingAttemptRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/funding-attempts',
    {
      config: { access: intentReaders },
      schema: {
        summary: "List the tenant's funding attempts",
        querystring: FundingAttemptListQuery,
        response: { 200: FundingAttemptList, ...authenticatedErrors() },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit = pageSizeDefault, status, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listFundingAttempts(tx, tenantId, { limit, status, startingAfter: cursor?.toLowerCase() }));
      const data = page.attempts.map((attempt) => presentAttempt(tenantId, attempt));
      return { object: 'list' as const, data, has_more: page.hasMore, next_cursor: page.hasMore ? (data.at(-1)?.attempt_id ?? null) : null };
    },
  );
}
