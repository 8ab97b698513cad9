// Policy registry routes under /harbor/policy/v1 (docs/predicates.md#managed-templates,
// docs/decisions.md#policy-registry): the managed templates, a preview and a dry-run test of a rule, drafting immutable
// versions, rolling one out, and reading the versions. Per the spec these POSTs do not honor idempotency keys; read
// /versions before retrying a draft.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import {
  PolicyPreview, PolicyRolloutBody, PolicyTestBody, PolicyTestResult, PolicyVersion, PolicyVersions, PolicyVersionsQuery,
  TemplateCatalog, TemplateChoiceBody,
} from '../../../contracts/policies.ts';
import { PolicyHeadMove } from '../../../contracts/policy-rollback.ts';
import { compilePredicate, evaluate, materializeTemplate, templateCatalog, type CompiledPredicate } from '../../../predicate/index.ts';
import { findPolicyHead, listPolicyVersions } from '../../../db/policy-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault } from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { draftPolicy, parseDigest, rolloutPolicy } from '../../../services/policy-service.ts';
import { presentHeadMove, presentVersion } from '../../policy-presenters.ts';

export async function policyRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  // Side-effect-free reads: a restricted key needs the discovery scope (the client's explain-policy tool).
  const readers = { access: { roles: anyRole, scope: 'mcp.discovery:read' } };
  const writers = { access: { roles: ['admin', 'operator'] as const } };

  app.get(
    '/policy/v1/templates',
    { config: readers, schema: { summary: 'The managed policy templates', response: { 200: TemplateCatalog, ...authenticatedErrors() } } },
    async () => ({ object: 'list', templates: templateCatalog() }) as const,
  );

  app.post(
    '/policy/v1/preview',
    {
      config: readers,
      schema: { summary: 'Preview the rule a template makes', body: TemplateChoiceBody, response: { 200: PolicyPreview, ...authenticatedBodyErrors() } },
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

  app.post(
    '/policy/v1/test',
    {
      config: readers,
      schema: { summary: 'Dry-run a rule against evidence', body: PolicyTestBody, response: { 200: PolicyTestResult, ...authenticatedBodyErrors() } },
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

  app.post(
    '/policy/v1/drafts',
    {
      config: writers,
      schema: { summary: 'Draft an immutable policy version', body: TemplateChoiceBody, response: { 201: PolicyVersion, ...authenticatedBodyErrors() } },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const version = await draftPolicy(app.database, tenantId, request.body.template_id, request.body.parameters ?? {});
      return reply.code(201).send(presentVersion(version, undefined));
    },
  );

  app.post(
    '/policy/v1/rollout',
    {
      config: writers,
      schema: { summary: 'Roll a version out as the template\'s head', body: PolicyRolloutBody, response: { 200: PolicyHeadMove, ...authenticatedBodyErrors(404, 409) } },
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

  app.get(
    '/policy/v1/versions',
    {
      config: readers,
      schema: { summary: 'A template\'s versions, newest first', querystring: PolicyVersionsQuery, response: { 200: PolicyVersions, ...authenticatedErrors() } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { template_id: templateId, limit = pageSizeDefault, cursor } = request.query;
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
