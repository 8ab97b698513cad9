// Tenant policy rules (docs/decisions.md#policy-registry): drafting numbered immutable versions from managed templates,
// rolling a version out as the head, and rolling back to an earlier version only against an explicit precondition.
import { createHash } from 'node:crypto';
import { materializeTemplate } from '../predicate/index.ts';
import { canonicalJson } from '../signing/canonical-json.ts';
import {
  allocateVersionSeq,
  findPolicyHead,
  findPolicyVersion,
  insertPolicyVersion,
  moveHead,
  type PolicyHead,
  type PolicyVersion,
} from '../db/policy-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Database } from '../infra/database.ts';

/** SHA-256 of the sorted-key compact JSON of {template_id, version_seq, parameters, materialized_predicate}. */
export function policyContentDigest(version: {
  templateId: string;
  versionSeq: number;
  parameters: unknown;
  materializedPredicate: unknown;
}): Buffer {
  const content = canonicalJson({
    template_id: version.templateId,
    version_seq: version.versionSeq,
    parameters: version.parameters,
    materialized_predicate: version.materializedPredicate,
  });
  return createHash('sha256').update(content).digest();
}

/** Digests arrive as 64 hex, optionally prefixed `sha256:` (the policy file's form). */
export function parseDigest(text: string): Buffer | undefined {
  const hex = text.startsWith('sha256:') ? text.slice('sha256:'.length) : text;
  return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : undefined;
}

export async function draftPolicy(database: Database, tenantId: string, templateId: string, parameters: unknown): Promise<PolicyVersion> {
  const materialized = materializeTemplate(templateId, parameters);
  return database.tenant(tenantId, async (tx) => {
    const versionSeq = await allocateVersionSeq(tx, tenantId, materialized.templateId);
    const content = {
      templateId: materialized.templateId,
      versionSeq,
      parameters: { ...materialized.parameters },
      materializedPredicate: materialized.predicate,
    };
    return insertPolicyVersion(tx, tenantId, { ...content, humanSummary: materialized.humanSummary, contentDigest: policyContentDigest(content) });
  });
}

export interface HeadMove {
  readonly head: PolicyHead;
  readonly previous: PolicyHead | undefined;
}

export async function rolloutPolicy(
  database: Database,
  tenantId: string,
  request: { templateId: string; versionSeq: number; expectedHeadDigest?: Buffer | undefined; actor: string },
): Promise<HeadMove> {
  return database.tenant(tenantId, async (tx) => {
    const previous = await findPolicyHead(tx, tenantId, request.templateId, { forUpdate: true });
    if (request.expectedHeadDigest && !(previous && previous.contentDigest.equals(request.expectedHeadDigest))) {
      throw headMoved(previous);
    }
    const target = await findPolicyVersion(tx, tenantId, request.templateId, { versionSeq: request.versionSeq });
    if (!target) throw new ServiceError('policy.version_not_found', { details: { template_id: request.templateId, version_seq: request.versionSeq } });
    await moveHead(tx, tenantId, {
      templateId: request.templateId,
      fromVersionSeq: previous?.versionSeq ?? null,
      toVersionSeq: target.versionSeq,
      action: 'rollout',
      actor: request.actor,
    });
    return { head: { versionSeq: target.versionSeq, contentDigest: target.contentDigest }, previous };
  });
}

export async function rollbackPolicy(
  database: Database,
  tenantId: string,
  request: { templateId: string; expectedHeadDigest: Buffer; targetDigest: Buffer; actor: string },
): Promise<HeadMove> {
  return database.tenant(tenantId, async (tx) => {
    const previous = await findPolicyHead(tx, tenantId, request.templateId, { forUpdate: true });
    if (!previous || !previous.contentDigest.equals(request.expectedHeadDigest)) throw headMoved(previous);
    const target = await findPolicyVersion(tx, tenantId, request.templateId, { contentDigest: request.targetDigest });
    if (!target) throw new ServiceError('policy.version_not_found', { details: { template_id: request.templateId, target_digest: request.targetDigest.toString('hex') } });
    await moveHead(tx, tenantId, {
      templateId: request.templateId,
      fromVersionSeq: previous.versionSeq,
      toVersionSeq: target.versionSeq,
      action: 'rollback',
      actor: request.actor,
    });
    return { head: { versionSeq: target.versionSeq, contentDigest: target.contentDigest }, previous };
  });
}

function headMoved(current: PolicyHead | undefined): ServiceError {
  return new ServiceError('policy.head_moved', {
    details: { current_head_seq: current?.versionSeq ?? null, current_head_digest: current?.contentDigest.toString('hex') ?? null },
  });
}
