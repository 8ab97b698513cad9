// Recording evidence for a funded intent (docs/engine.md#evidence--post-harborintentsidevidence): the payee's
// EvidenceSignV1 signature with the key committed at creation, the payload's shape against the intent's evidence
// schema, then the release rule evaluated and stored. The state moves to evidence_recorded whether the rule passed or
// not; confirm acts on it.
import { queueEvidenceInsert } from '../db/evidence-repository.ts';
import { lockIntent, queueEvidenceRecordedTransition, type Intent, type LockedIntent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { compilePredicate, evaluate, type PredicateEvaluation } from '../predicate/index.ts';
import { artifactsDigest, jsonDigestBlake3 } from '../signing/digests.ts';
import { verifyEd25519 } from '../signing/ed25519.ts';
import { base64ToBytes, bytesToHex } from '../signing/encoding.ts';
import { parseRfc3339 } from '../signing/rfc3339.ts';
import { evidenceSigningBytes } from '../signing/signed-structs.ts';
import { assertEvidenceMatchesSchema } from './evidence-schema.ts';

export interface EvidenceBody {
  payload: unknown;
  artifacts: string[];
  payee_did: string;
  payee_pubkey: string;
  payee_signature: string;
  submitted_at: string;
}

export interface RecordedEvidence {
  readonly intent: Intent;
  readonly evaluation: PredicateEvaluation;
  readonly payloadDigestHex: string;
  readonly artifactsDigestHex: string;
}

/** The intent, locked, or 404; 409 unless it is in `state`. */
export async function lockIntentIn(tx: Queryable, tenantId: string, intentId: string, states: readonly Intent['state'][]): Promise<LockedIntent> {
  return checkIntentState(await lockIntent(tx, tenantId, intentId.toLowerCase()), states);
}

/** `intent` when it exists and is in one of `states`: 404 when it does not exist, 409 when it is elsewhere. */
export function checkIntentState<T extends Intent>(intent: T | undefined, states: readonly Intent['state'][]): T {
  if (!intent) throw new ServiceError('intent.not_found');
  if (!states.includes(intent.state)) {
    throw new ServiceError('intent.invalid_state', { details: { state: intent.state, allowed_states: states } });
  }
  return intent;
}

export async function recordEvidence(tx: Queryable, tenantId: string, intentId: string, body: EvidenceBody): Promise<RecordedEvidence> {
  const intent = await lockIntentIn(tx, tenantId, intentId, ['funded']);
  if (intent.deadline.getTime() <= Date.now()) throw new ServiceError('intent.deadline_passed');
  const payeePubkey = base64ToBytes(body.payee_pubkey, 'payee_pubkey', 32);
  if (body.payee_did !== intent.payeeDid || intent.payeePubkey === null || !intent.payeePubkey.equals(payeePubkey)) {
    throw new ServiceError('evidence.payee_mismatch');
  }
  parseRfc3339(body.submitted_at, 'submitted_at');
  const signature = base64ToBytes(body.payee_signature, 'payee_signature', 64);
  // The signed bytes name this tenant and this intent: evidence signed for another intent does not verify here.
  const signed = evidenceSigningBytes({
    tenant_id: tenantId, intent_id: intent.intentId, payee_did: body.payee_did, payload: body.payload, artifacts: body.artifacts, submitted_at: body.submitted_at,
  });
  if (!verifyEd25519(intent.payeePubkey, signed, signature)) throw new ServiceError('signing.signature_invalid', { details: { field: 'payee_signature' } });

  if (typeof body.payload !== 'object' || body.payload === null || Array.isArray(body.payload)) throw new ServiceError('evidence.payload_not_object');
  assertEvidenceMatchesSchema(intent.evidenceSchema, body.payload);
  const evaluation = evaluate(compilePredicate(intent.predicateDsl), {
    evidence: body.payload,
    evidenceSchema: intent.evidenceSchema,
    amountCents: intent.amountCents,
  });
  const payloadDigest = Buffer.from(jsonDigestBlake3(body.payload, 'payload'));
  const artifactsDigestBytes = Buffer.from(artifactsDigest(body.artifacts));
  queueEvidenceInsert(tx, tenantId, {
    intentId: intent.intentId,
    payload: body.payload,
    artifacts: body.artifacts,
    payeeDid: body.payee_did,
    payeeSignature: Buffer.from(signature),
    submittedAt: body.submitted_at,
    payloadDigest,
    artifactsDigest: artifactsDigestBytes,
    predicatePassed: evaluation.passed,
    evaluation,
  });
  const recorded = queueEvidenceRecordedTransition(tx, intent, evaluation.passed);
  return { intent: recorded, evaluation, payloadDigestHex: bytesToHex(payloadDigest), artifactsDigestHex: bytesToHex(artifactsDigestBytes) };
}
