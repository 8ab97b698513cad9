// GET /harbor/intents/{id}/evidence: the evidence submitted for one intent as the service stored it, with the outcome
// and the evaluation trace it produced (docs/engine.md "Operator reads"). Same readers as the intent itself.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { EvidenceSubmission, EvidenceSubmissionList, EvidenceSubmissionQuery, IntentIdParams } from '../../../contracts/intents.ts';
import { listEvidenceSubmissions, type StoredEvidence } from '../../../db/evidence-repository.ts';
import { findIntent } from '../../../db/intent-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { intentReaders } from './intents.ts';

/** A submission's id: `evs_` and the hex of its payload digest, which is also the list's cursor. */
const submissionIdPrefix = 'evs_';

const submissionIdOf = (submission: StoredEvidence) => `${submissionIdPrefix}${submission.payloadDigest.toString('hex')}`;

/** One submission as the API shows it. The payee's signature is checked when the evidence arrives and kept for
 * audit exports; this read says only whether there was one (sandbox evidence is unsigned). */
function presentSubmission(tenantId: string, submission: StoredEvidence): EvidenceSubmission {
  return {
    object: 'evidence_submission',
    tenant_id: tenantId,
    submission_id: submissionIdOf(submission),
    intent_id: submission.intentId,
    submitted_at: submission.submittedAt,
    recorded_at: submission.recordedAt.toISOString(),
    payee_did: submission.payeeDid,
    payee_signed: submission.payeeSignature !== null,
    evidence: { payload: submission.payload, artifacts: [...submission.artifacts] },
    payload_digest: submission.payloadDigest.toString('hex'),
    artifacts_digest: submission.artifactsDigest.toString('hex'),
    outcome: submission.predicatePassed ? 'pass' : 'fail',
    predicate_passed: submission.predicatePassed,
    // The evaluation as the evidence answer carried it: `{passed, trace}`, one step per evaluated clause.
    predicate_evaluation: submission.evaluation,
    external_attestations: [...submission.externalAttestations],
    agent_run_id: submission.agentRunId ?? null,
  };
}

export async function intentEvidenceRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/intents/:intent_id/evidence',
    {
      config: { access: intentReaders },
      schema: {
        summary: 'The evidence submitted for an intent',
        params: IntentIdParams,
        querystring: EvidenceSubmissionQuery,
        response: { 200: EvidenceSubmissionList, ...authenticatedErrors(404) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const intentId = request.params.intent_id.toLowerCase();
      // The query schema's default has filled in `limit`.
      const { limit = pageSizeDefault, cursor } = request.query;
      const startingAfter = cursor === undefined ? undefined : Buffer.from(cursor.slice(submissionIdPrefix.length), 'hex');
      const page = await app.database.tenant(tenantId, async (tx) => {
        // An intent of another tenant is no different from none (404); one without evidence yet is an empty list.
        if (!(await findIntent(tx, tenantId, intentId))) return undefined;
        return listEvidenceSubmissions(tx, tenantId, intentId, { limit, startingAfter });
      });
      if (!page) throw new ServiceError('intent.not_found');
      const data = page.submissions.map((submission) => presentSubmission(tenantId, submission));
      return { object: 'list' as const, data, has_more: page.hasMore, next_cursor: page.hasMore ? (data.at(-1)?.submission_id ?? null) : null };
    },
  );
}
