// POST /v1/policy/rollback: moves a template's head back to an earlier version. A rollback changes which rule new
// intents are bound to, so it needs the expected current head, the target digest and confirm=true (else 428),
// and fails with 409 if the head moved since the caller looked.
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../../../errors/service-error.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import { parseDigest, rollbackPolicy } from '../../../services/policy-service.ts';
import { presentHeadMove } from '../../policy-presenters.ts';

interface RollbackBody {
  template_id: string;
  expected_head_digest?: string;
  target_digest?: string;
  confirm?: boolean;
}

export async function policyRollbackRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: RollbackBody }>(
    '/v1/policy/rollback',
    {
      config: { access: { roles: adminOnly } },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['template_id'],
          // The three preconditions are optional here so that leaving one out is a 428, not a 400.
          properties: {
            template_id: { type: 'string', pattern: '^[a-z0-9_]{1,64}$' },
            expected_head_digest: { type: 'string', pattern: '^(sha256:)?[0-9a-f]{64}$' },
            target_digest: { type: 'string', pattern: '^(sha256:)?[0-9a-f]{64}$' },
            confirm: { type: 'boolean' },
          },
        },
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
