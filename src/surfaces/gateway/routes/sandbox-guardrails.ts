// Sandbox guardrail routes (docs/capabilities.md): bootstrap a funded, unsigned intent with its capability token
// in one call, then submit evidence that is evaluated and settled at once. Sandbox tenants only. Tenant scope
// comes from the credential alone: the bodies have no tenant field (an unknown field is 400), and any x-tenant-id
// header is refused by the access hook (400 `request.tenant_header_refused`), as the public client expects.
import type { FastifyRequest } from 'fastify';
import { refuseAttachedNonBodyError } from '../../body-checked-in-handler.ts';
import { authenticatedBodyErrors, IdempotencyHeaders } from '../../../contracts/common.ts';
import {
  SandboxBootstrapBody,
  SandboxBootstrapped,
  SandboxEvidenceAnswer,
  SandboxEvidenceBody,
  SandboxIntentParams,
} from '../../../contracts/sandbox.ts';
import { principalOf } from '../../../plugins/access.ts';
import { compileBodyValidator } from '../../../infra/validation.ts';
import { assertSandboxTenant, bootstrapGuardrail, submitGuardrailEvidence } from '../../../engine/sandbox.ts';
import { engineMutation, type EngineRouteDefinition } from '../../harbor/engine-mutation.ts';

// A live tenant is refused (403) before its body is looked at.
const preValidation = async (request: FastifyRequest) => assertSandboxTenant(principalOf(request));

/** The evidence body schema; the MCP sandbox evidence tool takes it as its input schema. */
export const sandboxEvidenceBody = SandboxEvidenceBody;
const assertEvidenceBody: (value: unknown) => asserts value is SandboxEvidenceBody = compileBodyValidator<SandboxEvidenceBody>(SandboxEvidenceBody);

// The commands `sandboxBootstrap` and `sandboxEvidence` of the lifecycle table, whose entries give their URLs, roles,
// scope (`mcp.sandbox:write`, the client's `sandbox:write`) and the refused x-tenant-id; their idempotency
// operations are the table's too, and they take no recognition proof (src/surfaces/harbor/engine-routes.ts).

export const sandboxBootstrapRoute: EngineRouteDefinition = (app, route) =>
  route(
    {
      preValidation,
      schema: {
        summary: 'Bootstrap a funded sandbox intent with its capability token',
        body: SandboxBootstrapBody,
        headers: IdempotencyHeaders,
        response: { 200: SandboxBootstrapped, ...authenticatedBodyErrors(409, 422) },
      },
      handler: (request, reply) =>
        engineMutation<SandboxBootstrapped>(app, request, reply, async (tx, principal) => ({
          status: 200,
          body: await bootstrapGuardrail(tx, principal, app.gatewayKeys, request.body),
          // The answer carries a capability token: never cached.
          headers: { 'cache-control': 'private, no-store' },
        })),
    },
  );

export const sandboxEvidenceRoute: EngineRouteDefinition = (app, route) =>
  route(
    {
      bodyOptional: true,
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
      handler: (request, reply) => {
        refuseAttachedNonBodyError(request);
        const body = request.body ?? {};
        assertEvidenceBody(body);
        return engineMutation<SandboxEvidenceAnswer>(app, request, reply, async (tx, principal) => ({
          status: 200,
          body: await submitGuardrailEvidence(tx, principal.tenantId, request.params.intent_id, body, app.engineEffects),
        }));
      },
    },
  );
