// Evidence submissions: one per intent, kept with its signature, digests and the evaluation it produced.
import type { ExternalAttestation } from '../contracts/protocol.ts';
import type { Queryable, Statement } from '../infra/database.ts';

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
  /** What the client attested with the evidence, for the agent receipts (empty: nothing). */
  readonly externalAttestations?: readonly ExternalAttestation[];
  /** The agent run the client said the evidence came from. */
  readonly agentRunId?: string | undefined;
}

/** Queues the insert to travel with COMMIT: nothing reads it back in the transaction that records it. */
export function queueEvidenceInsert(tx: Queryable, tenantId: string, evidence: EvidenceRecord): void {
  tx.beforeCommit({
    text: `INSERT INTO evidence_submissions (tenant_id, intent_id, payload, artifacts, payee_did, payee_signature, submitted_at,
             payload_digest, artifacts_digest, predicate_passed, evaluation, external_attestations, agent_run_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    values: [
      tenantId, evidence.intentId, JSON.stringify(evidence.payload), evidence.artifacts, evidence.payeeDid, evidence.payeeSignature,
      evidence.submittedAt, evidence.payloadDigest, evidence.artifactsDigest, evidence.predicatePassed, JSON.stringify(evidence.evaluation),
      evidence.externalAttestations && evidence.externalAttestations.length > 0 ? JSON.stringify(evidence.externalAttestations) : null,
      evidence.agentRunId ?? null,
    ],
  });
}

/** An evidence submission as stored, with the time the service recorded it. */
export interface StoredEvidence extends EvidenceRecord {
  readonly externalAttestations: readonly ExternalAttestation[];
  readonly agentRunId: string | undefined;
  readonly recordedAt: Date;
}

/** The attestations stored with an intent's evidence (the intent-terminal agent receipt lists them); [] when none. */
export function evidenceAttestationsStatement(tenantId: string, intentId: string): Statement<ExternalAttestation[]> {
  return {
    text: 'SELECT external_attestations FROM evidence_submissions WHERE tenant_id = $1 AND intent_id = $2',
    values: [tenantId, intentId],
    read: ({ rows }) => attestationsOf((rows[0] as { external_attestations: unknown } | undefined)?.external_attestations ?? null),
  };
}

/** Attestations as stored (jsonb orders an object's members its own way): rebuilt in the receipt's field order. */
function attestationsOf(stored: unknown): ExternalAttestation[] {
  if (!Array.isArray(stored)) return [];
  return stored.map((entry: ExternalAttestation) => ({
    source: entry.source,
    kind: entry.kind,
    digest_sha256_hex: entry.digest_sha256_hex,
    ...(entry.reference_id === undefined ? {} : { reference_id: entry.reference_id }),
  }));
}

interface EvidenceRow {
  intent_id: string;
  payload: unknown;
  artifacts: string[];
  payee_did: string;
  payee_signature: Buffer | null;
  submitted_at: string;
  payload_digest: Buffer;
  artifacts_digest: Buffer;
  predicate_passed: boolean;
  evaluation: unknown;
  external_attestations: unknown;
  agent_run_id: string | null;
  recorded_at: Date;
}

/**
 * The evidence submissions of one intent, newest first. `startingAfter` is the payload digest of the last
 * submission of the previous page; one that names no submission of this intent gives an empty page. The table keeps
 * one submission per intent today (its key is the intent), so a page holds at most one; the order and the cursor
 * are those of a list all the same, so that a reader need not change when an intent keeps more.
 */
export async function listEvidenceSubmissions(
  tx: Queryable,
  tenantId: string,
  intentId: string,
  page: { limit: number; startingAfter?: Buffer | undefined },
): Promise<{ submissions: StoredEvidence[]; hasMore: boolean }> {
  const { rows } = await tx.query<EvidenceRow>(
    `SELECT intent_id, payload, artifacts, payee_did, payee_signature, submitted_at, payload_digest, artifacts_digest,
       predicate_passed, evaluation, external_attestations, agent_run_id, recorded_at
     FROM evidence_submissions
     WHERE tenant_id = $1 AND intent_id = $2
       AND ($3::bytea IS NULL OR (recorded_at, payload_digest) < (SELECT recorded_at, payload_digest FROM evidence_submissions
             WHERE tenant_id = $1 AND intent_id = $2 AND payload_digest = $3))
     ORDER BY recorded_at DESC, payload_digest DESC LIMIT $4`,
    [tenantId, intentId, page.startingAfter ?? null, page.limit + 1],
  );
  const submissions = rows.slice(0, page.limit).map(
    (row): StoredEvidence => ({
      intentId: row.intent_id,
      payload: row.payload,
      artifacts: row.artifacts,
      payeeDid: row.payee_did,
      payeeSignature: row.payee_signature,
      submittedAt: row.submitted_at,
      payloadDigest: row.payload_digest,
      artifactsDigest: row.artifacts_digest,
      predicatePassed: row.predicate_passed,
      evaluation: row.evaluation,
      externalAttestations: attestationsOf(row.external_attestations),
      agentRunId: row.agent_run_id ?? undefined,
      recordedAt: row.recorded_at,
    }),
  );
  return { submissions, hasMore: rows.length > page.limit };
}
