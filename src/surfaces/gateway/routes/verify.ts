// POST /verify (also served as POST /harbor/verify): capability verification before a paid or side-effecting tool runs
// (docs/capabilities.md#post-verify). 200 for allow and deny alike; an allow carries a decision that reserves the
// spend.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, IdempotencyHeaders } from '../../../contracts/common.ts';
import { CapabilityVerdict, CapabilityVerifyBody } from '../../../contracts/spend-decisions.ts';
import type { Role } from '../../../credentials/roles.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { principalOf } from '../../../plugins/access.ts';
import { runIdempotent } from '../../../plugins/idempotency.ts';
import { verifyCapability } from '../../../services/capability-service.ts';

/** Roles that may spend through a capability (docs/roles.md): auditors only read. */
export const spendRoles: readonly Role[] = ['admin', 'operator', 'agent'];
/** The restricted-key scope of the spend routes (the client's MCP scope `spend:write`). */
export const spendScope = 'mcp.spend:write';

/** The gateway's path, and the engine's path that the public client's direct engine client posts to: one operation
 * under both (same handler, access, rate limit and idempotency scope). */
export const verifyPaths = ['/verify', '/harbor/verify'] as const;

export async function verifyRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  for (const path of verifyPaths) {
    routes.post(
      path,
      {
        config: { access: { roles: spendRoles, scope: spendScope } },
        schema: {
          summary: 'Verify a capability before a paid tool call (allow reserves the spend)',
          body: CapabilityVerifyBody,
          headers: IdempotencyHeaders,
          // 409: the idempotency key is in use by another request, or was used for a different one.
          response: { 200: CapabilityVerdict, ...authenticatedBodyErrors(409) },
        },
      },
      async (request, reply) => {
        const { tenantId } = principalOf(request);
        const { body } = request;
        // The client sends its key in the header and in the body; either alone is honoured, two different ones are not.
        const headerKey = request.headers['idempotency-key'];
        if (body.idempotency_key !== undefined) {
          if (headerKey === undefined) request.headers['idempotency-key'] = body.idempotency_key;
          else if (headerKey !== body.idempotency_key) {
            throw new ServiceError('request.invalid', { message: 'The idempotency-key header and the body idempotency_key differ.' });
          }
        }
        const result = await runIdempotent(app.database, request, { tenantId, operation: 'capability.verify' }, async (tx) => ({
          status: 200,
          body: await verifyCapability(tx, app.gatewayKeys, tenantId, {
            intentId: body.intent_id,
            token: body.token,
            operation: body.operation,
            requestedSpendCents: body.requested_spend_cents,
            currency: body.currency,
            toolCall: {
              toolCallId: body.tool_call_id,
              toolName: body.tool_name,
              agentSubject: body.agent_subject,
              modelFamily: body.model_family,
              configHashHex: body.config_hash_hex,
              promptHashHex: body.prompt_hash_hex,
              vendorId: body.vendor_id,
            },
          }),
          headers: { 'cache-control': 'no-store' },
        }));
        const answer = result.body as CapabilityVerdict;
        // The audit trail of every decision, allowed or denied: the audit id finds it from the caller's side.
        request.log.info(
          {
            audit_id: answer.audit_id,
            intent_id: answer.intent_id,
            allow: answer.allow,
            code: answer.code,
            decision_id: answer.decision_id ?? null,
            operation: answer.operation,
            requested_spend_cents: answer.requested_spend_cents,
            remaining_cents: answer.remaining_cents,
            tool_call_id: body.tool_call_id,
            tool_name: body.tool_name,
            vendor_id: body.vendor_id,
            task_id: body.task_id,
            workflow_id: body.workflow_id,
            agent_subject: body.agent_subject,
            replayed: result.replayed,
          },
          'capability verify',
        );
        // 200 is the only status the work answers, stored and replayed alike.
        reply.code(result.status as 200);
        for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
        if (result.replayed) reply.header('idempotent-replayed', 'true');
        return answer;
      },
    );
  }
}
