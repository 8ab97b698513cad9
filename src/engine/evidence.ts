// The `evidence` command (docs/engine.md#evidence--post-harborintentsidevidence): the intent locked and checked
// against the lifecycle table, the payee-signed evidence decided (src/engine/decide.ts: signature, schema, rule),
// then the evidence row and the transition to evidence_recorded written, whether the rule passed or not; confirm
// acts on it.
import type { ExternalAttestation } from '../contracts/protocol.ts';
import { queueEvidenceInsert } from '../db/evidence-repository.ts';
import { queueEvidenceRecordedTransition, type Intent } from '../db/intent-repository.ts';
import type { Queryable } from '../infra/database.ts';
import type { PredicateEvaluation } from '../predicate/index.ts';
import { decideEvidence, type EvidenceBody } from './decide.ts';
import { lockForCommand } from './pipeline.ts';

export type { EvidenceBody };

export interface RecordedEvidence {
  readonly intent: Intent;
  readonly evaluation: PredicateEvaluation;
  readonly payloadDigestHex: string;
  readonly artifactsDigestHex: string;
}

/** What the client said about the evidence besides the signed body (the evidence route's headers), stored with it
 * for the intent's agent receipts. */
export interface EvidenceProvenance {
  readonly externalAttestations: readonly ExternalAttestation[];
  readonly agentRunId?: string | undefined;
}

export async function recordEvidence(
  tx: Queryable,
  tenantId: string,
  intentId: string,
  body: EvidenceBody,
  provenance: EvidenceProvenance = { externalAttestations: [] },
  nowMs = Date.now(),
): Promise<RecordedEvidence> {
  const intent = await lockForCommand(tx, tenantId, intentId, 'evidence');
  const decision = decideEvidence(intent, tenantId, body, nowMs);
  queueEvidenceInsert(tx, tenantId, { ...decision.record, externalAttestations: provenance.externalAttestations, agentRunId: provenance.agentRunId });
  const recorded = queueEvidenceRecordedTransition(tx, intent, decision.evaluation.passed, decision.meteredCostCents);
  return { intent: recorded, evaluation: decision.evaluation, payloadDigestHex: decision.payloadDigestHex, artifactsDigestHex: decision.artifactsDigestHex };
}
