// Policy registry routes under /harbor/policy/v1 (docs/predicates.md#managed-templates,
// docs/decisions.md#policy-registry): the managed templates, a preview and a dry-run test of a rule, drafting immutable
// versions, rolling one out, and reading the versions. Per the spec these POSTs do not honor idempotency keys; read
// /versions before retrying a draft.
import type { FastifyInstance } from 'fastify';
import { compilePredicate, evaluate, materializeTemplate, templateCatalog, type CompiledPredicate } from '../../../predicate/index.ts';
import { findPolicyHead, listPolicyVersions } from '../../../db/policy-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault, pageSizeMax, policyVersionSeqMax } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { draftPolicy, parseDigest, rolloutPolicy } from '../../../services/policy-service.ts';
import { presentHeadMove, presentVersion } from '../../policy-presenters.ts';

const templateIdSchema = { type: 'string', pattern: '^[a-z0-9_]{1,64}$' } as const;
const digestSchema = { type: 'string', pattern: '^(sha256:)?[0-9a-f]{64}$' } as const;
/** Parameters are checked by the template itself, which names the offending one. */
const parametersSchema = { type: 'object' } as const;

interface TestBody {
  template_id?: string;
  parameters?: Record<string, unknown>;
  predicate_dsl?: unknown;
  evidence: unknown;
  evidence_schema?: Record<string, unknown>;
  amount_cents?: number;
}

export async function policyRoutes(app: FastifyInstance): Promise<void> {
  // Side-effect-free reads: a restricted key needs the discovery scope (the client's explain-policy tool).
  const readers = { access: { roles: anyRole, scope: 'mcp.discovery:read' } };
  const writers = { access: { roles: ['admin', 'operator'] as const } };

  app.get('/policy/v1/templates', { config: readers }, async () => ({ object: 'list', templates: templateCatalog() }));

  app.post<{ Body: { template_id: string; parameters?: Record<string, unknown> } }>(
    '/policy/v1/preview',
    {
      config: readers,
      schema: {
        body: { type: 'object', additionalProperties: false, required: ['template_id'], properties: { template_id: templateIdSchema, parameters: parametersSchema } },
      },
    },
    async (request) => {
      const materialized = materializeTemplate(request.body.template_id, request.body.parameters ?? {});
      return {
        template_id: materialized.templateId,
        parameters: materialized.parameters,
        materialized_dsl: materialized.predicate,
        human_summary: materialized.humanSummary,
      };
    },
  );

  app.post<{ Body: TestBody }>(
    '/policy/v1/test',
    {
      config: readers,
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['evidence'],
          properties: {
            template_id: templateIdSchema,
            parameters: parametersSchema,
            predicate_dsl: {},
            evidence: {},
            evidence_schema: { type: 'object' },
            amount_cents: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          },
        },
      },
    },
    async (request) => {
      const body = request.body;
      if ((body.template_id === undefined) === (body.predicate_dsl === undefined)) {
        throw new ServiceError('request.invalid', {
          message: 'Give either template_id (with parameters) or predicate_dsl, not both and not neither.',
          details: { fields: [{ location: 'body', path: '/template_id', message: 'exactly one of template_id and predicate_dsl' }] },
        });
      }
      let compiled: CompiledPredicate;
      let materializedDsl: unknown;
      if (body.template_id !== undefined) {
        const materialized = materializeTemplate(body.template_id, body.parameters ?? {});
        compiled = materialized.compiled;
        materializedDsl = materialized.predicate;
      } else {
        compiled = compilePredicate(body.predicate_dsl);
        materializedDsl = body.predicate_dsl;
      }
      const evaluation = evaluate(compiled, {
        evidence: body.evidence,
        evidenceSchema: body.evidence_schema ?? {},
        amountCents: body.amount_cents ?? 0,
      });
      return { predicate_evaluation: evaluation, materialized_dsl: materializedDsl };
    },
  );

  app.post<{ Body: { template_id: string; parameters?: Record<string, unknown> } }>(
    '/policy/v1/drafts',
    {
      config: writers,
      schema: {
        body: { type: 'object', additionalProperties: false, required: ['template_id'], properties: { template_id: templateIdSchema, parameters: parametersSchema } },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const version = await draftPolicy(app.database, tenantId, request.body.template_id, request.body.parameters ?? {});
      return reply.code(201).send(presentVersion(version, undefined));
    },
  );

  app.post<{ Body: { template_id: string; version_seq: number; expected_head_digest?: string } }>(
    '/policy/v1/rollout',
    {
      config: writers,
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['template_id', 'version_seq'],
          properties: { template_id: templateIdSchema, version_seq: { type: 'integer', minimum: 1, maximum: policyVersionSeqMax }, expected_head_digest: digestSchema },
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { template_id: templateId, version_seq: versionSeq, expected_head_digest: expected } = request.body;
      const moved = await rolloutPolicy(app.database, principal.tenantId, {
        templateId,
        versionSeq,
        expectedHeadDigest: expected === undefined ? undefined : parseDigest(expected),
        actor: principal.subject,
      });
      return presentHeadMove(templateId, moved);
    },
  );

  app.get<{ Querystring: { template_id: string; limit: number; cursor?: number } }>(
    '/policy/v1/versions',
    {
      config: readers,
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['template_id'],
          properties: {
            template_id: templateIdSchema,
            limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault },
            cursor: { type: 'integer', minimum: 1, maximum: policyVersionSeqMax },
          },
        },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { template_id: templateId, limit, cursor } = request.query;
      const { head, page } = await app.database.tenant(tenantId, async (tx) => ({
        head: await findPolicyHead(tx, tenantId, templateId),
        page: await listPolicyVersions(tx, tenantId, templateId, { limit, beforeSeq: cursor }),
      }));
      return {
        template_id: templateId,
        current_head_seq: head?.versionSeq ?? null,
        current_head_digest: head?.contentDigest.toString('hex') ?? null,
        versions: page.versions.map((version) => presentVersion(version, head?.versionSeq)),
        has_more: page.hasMore,
        next_cursor: page.hasMore ? (page.versions.at(-1)?.versionSeq ?? null) : null,
      };
    },
  );
}
