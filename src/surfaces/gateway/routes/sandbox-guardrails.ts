// Sandbox guardrail routes (docs/capabilities.md): bootstrap a funded, unsigned intent with its capability token
// in one call, then submit evidence that is evaluated and settled at once. Sandbox tenants only. Tenant scope
// comes from the credential alone: the bodies have no tenant field (an unknown field is 400), and any x-tenant-id
// header is refused by the access hook (400 `request.tenant_header_refused`), as the public client expects.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { lifecycle } from '../../../engine/lifecycle.ts';
import { allowedToolLengthMax, evidenceArtifactsMax, sandboxRequestedSpendCentsMax } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import type { Queryable } from '../../../infra/database.ts';
import { runIdempotent, type EngineAnswer, type IdempotentOperation } from '../../../plugins/idempotency.ts';
import { compileBodyValidator } from '../../../infra/validation.ts';
import {
  assertSandboxTenant,
  bootstrapGuardrail,
  submitGuardrailEvidence,
  type BootstrapBody,
  type SandboxEvidenceBody,
} from '../../../engine/sandbox.ts';
import { intentIdParams } from '../../harbor/routes/intents.ts';

/** The restricted-key scope of these routes (the client's MCP scope `sandbox:write`). */
const guardrailScope = 'mcp.sandbox:write';
const bootstrapAccess = { roles: lifecycle.sandboxBootstrap.roles, scope: guardrailScope, tenantHeader: 'refused' } as const;
const evidenceAccess = { roles: lifecycle.sandboxEvidence.roles, scope: guardrailScope, tenantHeader: 'refused' } as const;
// A live tenant is refused (403) before its body is looked at.
const preValidation = async (request: FastifyRequest) => assertSandboxTenant(principalOf(request));

// At least one non-space character: the operation becomes the intent's one allowed tool, trimmed and lowercased.
const operation = { type: 'string', minLength: 1, maxLength: allowedToolLengthMax, pattern: '\\S' } as const;

const bootstrapBody = {
  type: 'object',
  additionalProperties: false,
  required: ['operation', 'requested_spend_cents'],
  properties: {
    operation,
    requested_spend_cents: { type: 'integer', minimum: 1, maximum: sandboxRequestedSpendCentsMax },
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    metadata: { type: 'object' },
    completion_preset: { type: 'string', minLength: 1, maxLength: 128 },
    template_id: { type: 'string', minLength: 1, maxLength: 64 },
    parameters: { type: 'object' },
    evidence_schema: { type: 'object' },
  },
} as const;

// Every field is optional and clients may send no body at all, so the body is checked in the handler. Exported for
// the MCP sandbox evidence tool, whose input schema is this body schema.
export const sandboxEvidenceBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    payload: { type: 'object' },
    vendor_payload: {},
    artifacts: { type: 'array', maxItems: evidenceArtifactsMax, items: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
    operation,
    requested_spend_cents: { type: 'integer', minimum: 0, maximum: sandboxRequestedSpendCentsMax },
    metadata: { type: 'object' },
  },
} as const;

const assertEvidenceBody: (value: unknown) => asserts value is SandboxEvidenceBody = compileBodyValidator<SandboxEvidenceBody>(sandboxEvidenceBody);

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
  app.post<{ Body: BootstrapBody }>(
    '/v1/sandbox/guardrails/bootstrap',
    { config: { access: bootstrapAccess }, preValidation, schema: { body: bootstrapBody } },
    (request, reply) =>
      guardrailCall(app, request, reply, lifecycle.sandboxBootstrap.idempotencyOperation, async (tx) => ({
        status: 200,
        body: await bootstrapGuardrail(tx, principalOf(request), app.gatewayKeys, request.body),
        // The answer carries a capability token: never cached.
        headers: { 'cache-control': 'private, no-store' },
      })),
  );

  app.post<{ Params: { intent_id: string } }>(
    '/v1/sandbox/guardrails/:intent_id/evidence',
    { config: { access: evidenceAccess }, preValidation, schema: { params: intentIdParams } },
    (request, reply) => {
      const body = request.body ?? {};
      assertEvidenceBody(body);
      return guardrailCall(app, request, reply, lifecycle.sandboxEvidence.idempotencyOperation, async (tx) => ({
        status: 200,
        body: await submitGuardrailEvidence(tx, principalOf(request).tenantId, request.params.intent_id, body, app.engineEffects),
      }));
    },
  );
}
