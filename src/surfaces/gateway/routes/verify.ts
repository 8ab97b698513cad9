// POST /verify (also served as POST /harbor/verify): capability verification before a paid or side-effecting tool runs
// (docs/capabilities.md#post-verify). 200 for allow and deny alike; an allow carries a decision that reserves the
// spend.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Role } from '../../../credentials/roles.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import {
  capabilityTokenLengthMax,
  idempotencyKeyLengthMax,
  idempotencyKeyLengthMin,
  requestedSpendCentsMax,
  verifyHashHexLengthMax,
  verifyTextFieldLengthMax,
} from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { runIdempotent } from '../../../plugins/idempotency.ts';
import { verifyCapability } from '../../../services/capability-service.ts';

/** Roles that may spend through a capability (docs/roles.md): auditors only read. */
export const spendRoles: readonly Role[] = ['admin', 'operator', 'agent'];
/** The restricted-key scope of the spend routes (the client's MCP scope `spend:write`). */
export const spendScope = 'mcp.spend:write';

interface VerifyBody {
  intent_id: string;
  token: string;
  operation: string;
  requested_spend_cents: number;
  currency?: string;
  idempotency_key?: string;
  vendor_id?: string;
  task_id?: string;
  workflow_id?: string;
  tool_call_id?: string;
  tool_name?: string;
  agent_subject?: string;
  approval_token?: string;
  model_family?: string;
  config_hash_hex?: string;
  prompt_hash_hex?: string;
}

const text = { type: 'string', maxLength: verifyTextFieldLengthMax } as const;
const hashHex = { type: 'string', pattern: `^[0-9a-fA-F]{0,${verifyHashHexLengthMax}}$` } as const;

const verifyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['intent_id', 'token', 'operation'],
  properties: {
    // Any string: one that names no intent of the token is a deny (intent_mismatch), not a malformed request.
    intent_id: { type: 'string', minLength: 1, maxLength: 64 },
    token: { type: 'string', minLength: 1, maxLength: capabilityTokenLengthMax },
    operation: { type: 'string', minLength: 1, maxLength: verifyTextFieldLengthMax },
    requested_spend_cents: { type: 'integer', minimum: 0, maximum: requestedSpendCentsMax, default: 0 },
    currency: text,
    idempotency_key: { type: 'string', minLength: idempotencyKeyLengthMin, maxLength: idempotencyKeyLengthMax },
    vendor_id: text,
    task_id: text,
    workflow_id: text,
    tool_call_id: text,
    tool_name: text,
    agent_subject: text,
    approval_token: text,
    model_family: text,
    config_hash_hex: hashHex,
    prompt_hash_hex: hashHex,
  },
} as const;

/** The gateway's path, and the engine's path that the public client's direct engine client posts to: one operation
 * under both (same handler, access, rate limit and idempotency scope). */
export const verifyPaths = ['/verify', '/harbor/verify'] as const;

export async function verifyRoutes(app: FastifyInstance): Promise<void> {
  for (const path of verifyPaths) {
    app.post<{ Body: VerifyBody }>(path, { config: { access: { roles: spendRoles, scope: spendScope } }, schema: { body: verifyBody } }, verify);
  }

  async function verify(request: FastifyRequest<{ Body: VerifyBody }>, reply: FastifyReply): Promise<unknown> {
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
      }),
      headers: { 'cache-control': 'no-store' },
    }));
    const answer = result.body as Awaited<ReturnType<typeof verifyCapability>>;
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
    reply.code(result.status);
    for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
    if (result.replayed) reply.header('idempotent-replayed', 'true');
    return answer;
  }
}
