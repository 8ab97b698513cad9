// `client.policies`: the managed templates, preview and dry-run test of a rule, drafting immutable versions,
// rolling one out as the head, and reading versions (what a v7 intent binds to).
import { checkedAnswer } from './answers.ts';
import type { ClientCore } from './core.ts';
import { policyVersionPagesMax } from './defaults.ts';
import { SvcNotFoundError } from './errors.ts';
import type { JsonObject, PolicyPreview, PolicyRollout, PolicyTemplate, PolicyTestResult, PolicyVersion, PolicyVersionList } from './types.ts';

export interface PolicyTestParams {
  /** A template with parameters, or `predicateDsl`: exactly one. */
  readonly templateId?: string;
  readonly parameters?: JsonObject;
  readonly predicateDsl?: JsonObject;
  readonly evidence: unknown;
  readonly evidenceSchema?: JsonObject;
  readonly amountCents?: number;
}

export class Policies {
  readonly #core: ClientCore;

  constructor(core: ClientCore) {
    this.#core = core;
  }

  /** The managed templates with their parameters and defaults. */
  async templates(): Promise<PolicyTemplate[]> {
    const { body, response } = await this.#core.get('/harbor/policy/v1/templates');
    return checkedAnswer('TemplateCatalog', body, response).templates;
  }

  /** The rule a template and parameters materialize to, with a human summary. Pure, so retried like a GET. */
  async preview(params: { templateId: string; parameters?: JsonObject }): Promise<PolicyPreview> {
    const { body, response } = await this.#core.post('/harbor/policy/v1/preview', { template_id: params.templateId, parameters: params.parameters ?? {} }, { retrySafe: true });
    return checkedAnswer('PolicyPreview', body, response);
  }

  /** Evaluates a rule against sample evidence without creating anything. Pure, so retried like a GET. */
  async test(params: PolicyTestParams): Promise<PolicyTestResult> {
    const request = {
      ...(params.templateId === undefined ? {} : { template_id: params.templateId, parameters: params.parameters ?? {} }),
      ...(params.predicateDsl === undefined ? {} : { predicate_dsl: params.predicateDsl }),
      evidence: params.evidence,
      ...(params.evidenceSchema === undefined ? {} : { evidence_schema: params.evidenceSchema }),
      ...(params.amountCents === undefined ? {} : { amount_cents: params.amountCents }),
    };
    const { body, response } = await this.#core.post('/harbor/policy/v1/test', request, { retrySafe: true });
    return checkedAnswer('PolicyTestResult', body, response);
  }

  /** Drafts a new immutable version. The route honours no idempotency key (spec), so a 5xx or a network failure is
   * not retried: read `versions()` to see whether the draft exists before trying again. */
  async draft(params: { templateId: string; parameters?: JsonObject }): Promise<PolicyVersion> {
    const { body, response } = await this.#core.post('/harbor/policy/v1/drafts', { template_id: params.templateId, parameters: params.parameters ?? {} }, { retrySafe: false });
    return checkedAnswer('PolicyVersion', body, response);
  }

  /** Makes a version the head new v7 intents bind to; `expectedHeadDigest` refuses (409) if the head moved. Not
   * retried on 5xx (no idempotency key): read `versions()` first. */
  async rollout(params: { templateId: string; versionSeq: number; expectedHeadDigest?: string }): Promise<PolicyRollout> {
    const request = {
      template_id: params.templateId,
      version_seq: params.versionSeq,
      ...(params.expectedHeadDigest === undefined ? {} : { expected_head_digest: params.expectedHeadDigest }),
    };
    const { body, response } = await this.#core.post('/harbor/policy/v1/rollout', request, { retrySafe: false });
    return checkedAnswer('PolicyHeadMove', body, response);
  }

  /** Drafts a version and rolls it out, guarded by the head read just before. Answers the new head version. */
  async publish(params: { templateId: string; parameters?: JsonObject }): Promise<PolicyVersion> {
    const before = await this.versions({ templateId: params.templateId, limit: 1 });
    const drafted = await this.draft(params);
    await this.rollout({
      templateId: params.templateId,
      versionSeq: drafted.version_seq,
      ...(before.current_head_digest === null ? {} : { expectedHeadDigest: before.current_head_digest }),
    });
    return { ...drafted, is_head: true };
  }

  /** One page of versions, newest first; pass `next_cursor` back as `cursor`. */
  async versions(params: { templateId: string; limit?: number; cursor?: number }): Promise<PolicyVersionList> {
    const { body, response } = await this.#core.get('/harbor/policy/v1/versions', { template_id: params.templateId, limit: params.limit, cursor: params.cursor });
    return checkedAnswer('PolicyVersions', body, response);
  }

  /** A version by number, or the head when `versionSeq` is not given. `SvcNotFoundError`-like failure when absent. */
  async version(templateId: string, versionSeq?: number): Promise<PolicyVersion> {
    let cursor: number | undefined;
    for (let page = 0; page < policyVersionPagesMax; page += 1) {
      const list = await this.versions({ templateId, ...(cursor === undefined ? {} : { cursor }) });
      const wanted = versionSeq ?? list.current_head_seq;
      if (wanted === null) break;
      const found = list.versions.find((version) => version.version_seq === wanted);
      if (found) return found;
      if (!list.has_more || list.next_cursor === null) break;
      cursor = list.next_cursor;
    }
    const what = versionSeq === undefined ? 'no head' : `no version ${versionSeq}`;
    throw new SvcNotFoundError({
      statusCode: 404, url: `${this.#core.transport.baseUrl}/harbor/policy/v1/versions`, bodyText: '', code: 'policy.version_not_found',
      message: `The tenant's policy ${templateId} has ${what}.`, requestId: undefined, details: { template_id: templateId },
    });
  }
}
