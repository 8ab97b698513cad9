// Agent tool policy documents (docs/policy-documents.md): POST /v1/policy/validate checks a document against the
// catalogue and the tenant's policy registry; POST /v1/org-policies/{policy_id}/effective merges a tenant overlay
// onto its org base, the registry's head of that policy. Both change nothing.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors } from '../../../contracts/common.ts';
import {
  EffectivePolicy,
  EffectivePolicyQuery,
  OrgPolicyParams,
  PolicyDocumentBody,
  PolicyValidateQuery,
  PolicyValidation,
} from '../../../contracts/policy-documents.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { resolveEffectivePolicy, validatePolicyDocument } from '../../../services/policy-document-service.ts';

/** Reads of the policy registry that change nothing: every role, and restricted keys with the discovery scope, as
 * the registry's other reads (preview, test, versions). */
const policyReaders = { access: { roles: anyRole, scope: 'mcp.discovery:read' } } as const;

const isSet = (flag: string | undefined) => flag === '1' || flag === 'true';

export async function policyDocumentRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.post(
    '/v1/policy/validate',
    {
      config: policyReaders,
      schema: {
        summary: 'Validate an agent tool policy document against the catalogue and this tenant\'s policy registry',
        querystring: PolicyValidateQuery,
        body: PolicyDocumentBody,
        response: { 200: PolicyValidation, ...authenticatedBodyErrors() },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const options = { strict: isSet(request.query.strict), resolveInheritance: isSet(request.query.resolve_inheritance) };
      return app.database.tenant(tenantId, (tx) => validatePolicyDocument(tx, tenantId, request.body, options));
    },
  );

  routes.post(
    '/v1/org-policies/:policy_id/effective',
    {
      config: policyReaders,
      schema: {
        summary: 'The effective policy of a tenant overlay merged onto its org base',
        params: OrgPolicyParams,
        querystring: EffectivePolicyQuery,
        body: PolicyDocumentBody,
        response: { 200: EffectivePolicy, ...authenticatedBodyErrors(404, 422) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return app.database.tenant(tenantId, (tx) => resolveEffectivePolicy(tx, tenantId, request.params.policy_id, request.body, request.query.digest));
    },
  );
}
