// Sandbox guardrail routes (docs/capabilities.md): bootstrap a funded, unsigned intent with its capability token
// in one call, then submit evidence that is evaluated and settled at once. Sandbox tenants only. Tenant scope
// comes from the credential alone: the bodies have no tenant field (an unknown field is 400), and any x-tenant-id
// header is refused by the access hook (400 `request.tenant_header_refused`), as the public client expects.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { refuseAttachedNonBodyError } from '../../body-checked-in-handler.ts';
import { authenticatedBodyErrors, IdempotencyHeaders } from '../../../contracts/common.ts';
import {
  SandboxBootstrapBody,
  SandboxBootstrapped,
  SandboxEvidenceAnswer,
  SandboxEvidenceBody,
  SandboxIntentParams,
} from '../../../contracts/sandbox.ts';
import { lifecycle } from '../../../engine/lifecycle.ts';
import { principalOf } from '../../../plugins/access.ts';
import type { Queryable } from '../../../infra/database.ts';
import { runIdempotent, type EngineAnswer, type IdempotentOperation } from '../../../plugins/idempotency.ts';
import { compileBodyValidator } from '../../../infra/validation.ts';
import { assertSandboxTenant, bootstrapGuardrail, submitGuardrailEvidence } from '../../../engine/sandbox.ts';

/** The restricted-key scope of these routes (the client's MCP scope `sandbox:write`). */
const guardrailScope = 'mcp.sandbox:write';
const bootstrapAccess = { roles: lifecycle.sandboxBootstrap.roles, scope: guardrailScope, tenantHeader: 'refused' } as const;
const evidenceAccess = { roles: lifecycle.sandboxEvidence.roles, scope: guardrailScope, tenantHeader: 'refused' } as const;
// A live tenant is refused (403) before its body is looked at.
const preValidation = async (request: FastifyRequest) => assertSandboxTenant(principalOf(request));

/** The evidence body schema; the MCP sandbox evidence tool takes it as its input schema. */
export const sandboxEvidenceBody = SandboxEvidenceBody;
const assertEvidenceBody: (value: unknown) => asserts value is SandboxEvidenceBody = compileBodyValidator<SandboxEvidenceBody>(SandboxEvidenceBody);

/** The work as an idempotent tenant transaction, sent with its status and headers. */
async function guardrailCall(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  operationName: IdempotentOperation,
  work: (tx: Queryable) => Promise<EngineAnswer>,
): Promise<unknown> {
  const principal = principalOf(request);
  const result = await runIdempotent(app.database, request, { tenantId: principal.tenantId, operation: operationName }, work);
  reply.code(result.status);
  for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return result.body;
}

export async function sandboxGuardrailRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.post(
    '/v1/sandbox/guardrails/bootstrap',
    {
      config: { access: bootstrapAccess },
      preValidation,
      schema: {
        summary: 'Bootstrap a funded sandbox intent with its capability token',
        body: SandboxBootstrapBody,
        headers: IdempotencyHeaders,
        response: { 200: SandboxBootstrapped, ...authenticatedBodyErrors(409, 422) },
      },
    },
    (request, reply) =>
      guardrailCall(app, request, reply, lifecycle.sandboxBootstrap.idempotencyOperation, async (tx) => ({
        status: 200,
        body: await bootstrapGuardrail(tx, principalOf(request), app.gatewayKeys, request.body),
        // The answer carries a capability token: never cached.
        headers: { 'cache-control': 'private, no-store' },
      })) as Promise<SandboxBootstrapped>,
  );

  routes.post(
    '/v1/sandbox/guardrails/:intent_id/evidence',
    {
      config: { access: evidenceAccess, bodyOptional: true },
      preValidation,
      // Every field is optional and clients may send no body at all: the handler checks the body (or `{}`) itself, so
      // the route's own body validation is attached rather than raised; a bad path parameter is still refused.
      attachValidation: true,
      schema: {
        summary: 'Submit evidence for a sandbox intent: evaluated and settled at once',
        params: SandboxIntentParams,
        body: SandboxEvidenceBody,
        headers: IdempotencyHeaders,
        response: { 200: SandboxEvidenceAnswer, ...authenticatedBodyErrors(404, 409, 422) },
      },
    },
    (request, reply) => {
      refuseAttachedNonBodyError(request);
      const body = request.body ?? {};
      assertEvidenceBody(body);
      return guardrailCall(app, request, reply, lifecycle.sandboxEvidence.idempotencyOperation, async (tx) => ({
        status: 200,
        body: await submitGuardrailEvidence(tx, principalOf(request).tenantId, request.params.intent_id, body, app.engineEffects),
      })) as Promise<SandboxEvidenceAnswer>;
    },
  );
}
