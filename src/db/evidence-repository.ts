// Evidence submissions: one per intent, kept with its signature, digests and the evaluation it produced.
import type { Queryable } from '../infra/database.ts';

export interface EvidenceRecord {
  readonly intentId: string;
  readonly payload: unknown;
  readonly artifacts: readonly string[];
  readonly payeeDid: string;
  readonly payeeSignature: Buffer | null;
  readonly submittedAt: string;
  readonly payloadDigest: Buffer;
  readonly artifactsDigest: Buffer;
  readonly predicatePassed: boolean;
  readonly evaluation: unknown;
}

/** Queues the insert to travel with COMMIT: nothing reads it back in the transaction that records it. */
export function queueEvidenceInsert(tx: Queryable, tenantId: string, evidence: EvidenceRecord): void {
  tx.beforeCommit({
    text: `INSERT INTO evidence_submissions (tenant_id, intent_id, payload, artifacts, payee_did, payee_signature, submitted_at,
             payload_digest, artifacts_digest, predicate_passed, evaluation)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    values: [
      tenantId, evidence.intentId, JSON.stringify(evidence.payload), evidence.artifacts, evidence.payeeDid, evidence.payeeSignature,
      evidence.submittedAt, evidence.payloadDigest, evidence.artifactsDigest, evidence.predicatePassed, JSON.stringify(evidence.evaluation),
    ],
  });
}
