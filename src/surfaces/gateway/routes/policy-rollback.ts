// POST /v1/policy/rollback: moves a template's head back to an earlier version. A rollback changes which rule new
// intents are bound to, so it needs the expected current head, the target digest and confirm=true (else 428),
// and fails with 409 if the head moved since the caller looked.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors } from '../../../contracts/common.ts';
import { PolicyHeadMove, PolicyRollbackBody } from '../../../contracts/policy-rollback.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import { parseDigest, rollbackPolicy } from '../../../services/policy-service.ts';
import { presentHeadMove } from '../../policy-presenters.ts';

export async function policyRollbackRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/policy/rollback',
    {
      config: { access: { roles: adminOnly } },
      schema: {
        summary: 'Move a policy template\'s head back to an earlier version',
        body: PolicyRollbackBody,
        response: { 200: PolicyHeadMove, ...authenticatedBodyErrors(404, 409, 428) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { template_id: templateId, expected_head_digest: expected, target_digest: target, confirm } = request.body;
      if (expected === undefined || target === undefined || confirm !== true) {
        const missing = [
          ...(expected === undefined ? ['expected_head_digest'] : []),
          ...(target === undefined ? ['target_digest'] : []),
          ...(confirm !== true ? ['confirm'] : []),
        ];
        throw new ServiceError('policy.rollback_precondition_required', { details: { missing } });
      }
      const moved = await rollbackPolicy(app.database, principal.tenantId, {
        templateId,
        expectedHeadDigest: parseDigest(expected)!,
        targetDigest: parseDigest(target)!,
        actor: principal.subject,
      });
      return presentHeadMove(templateId, moved);
    },
  );
}
