// The evidence decision, pure: payee-signed evidence for a funded intent checked (deadline, payee, signature,
// payload shape) and the release rule evaluated. src/engine/evidence.ts writes it; the sandbox evidence command
// reuses the evaluation.
import type { EvidenceRecord } from '../../db/evidence-repository.ts';
import type { Intent } from '../../db/intent-repository.ts';
import { ServiceError } from '../../errors/service-error.ts';
import { compilePredicate, evaluate, type PredicateEvaluation } from '../../predicate/index.ts';
import { artifactsDigest, jsonDigestBlake3 } from '../../signing/digests.ts';
import { verifyEd25519 } from '../../signing/ed25519.ts';
import { base64ToBytes, bytesToHex } from '../../signing/encoding.ts';
import { parseRfc3339 } from '../../signing/rfc3339.ts';
import { evidenceSigningBytes } from '../../signing/signed-structs.ts';
import { assertEvidenceMatchesSchema } from '../evidence-schema.ts';

/** Evidence as the client sends it (docs/engine.md#evidence--post-harborintentsidevidence). */
export interface EvidenceBody {
  payload: unknown;
  artifacts: string[];
  payee_did: string;
  payee_pubkey: string;
  payee_signature: string;
  submitted_at: string;
}

export interface EvidenceDecision {
  readonly to: 'evidence_recorded';
  readonly evaluation: PredicateEvaluation;
  /** Under metered release, the cost a passing evidence signed (what the settlement releases); else null. */
  readonly meteredCostCents: number | null;
  /** The evidence_submissions row to write. */
  readonly record: EvidenceRecord;
  readonly payloadDigestHex: string;
  readonly artifactsDigestHex: string;
}

/** Payee-signed evidence for a funded `intent` of `tenantId`: the payee's key and signature, the payload's shape
 * against the evidence schema, then the release rule evaluated. A failed rule is not an error. */
export function decideEvidence(intent: Intent, tenantId: string, body: EvidenceBody, nowMs: number): EvidenceDecision {
  if (intent.deadline.getTime() <= nowMs) throw new ServiceError('intent.deadline_passed');
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
  const evaluated = evaluateEvidence(intent, body.payload as Record<string, unknown>, body.artifacts);
  return {
    to: 'evidence_recorded',
    evaluation: evaluated.evaluation,
    meteredCostCents: evaluated.meteredCostCents,
    record: {
      intentId: intent.intentId,
      payload: body.payload,
      artifacts: body.artifacts,
      payeeDid: body.payee_did,
      payeeSignature: Buffer.from(signature),
      submittedAt: body.submitted_at,
      payloadDigest: evaluated.payloadDigest,
      artifactsDigest: evaluated.artifactsDigest,
      predicatePassed: evaluated.evaluation.passed,
      evaluation: evaluated.evaluation,
    },
    payloadDigestHex: bytesToHex(evaluated.payloadDigest),
    artifactsDigestHex: bytesToHex(evaluated.artifactsDigest),
  };
}

/** The payload checked against the intent's evidence schema, the rule evaluated, and the digests of both parts. */
export function evaluateEvidence(
  intent: Intent,
  payload: Record<string, unknown>,
  artifacts: readonly string[],
): { evaluation: PredicateEvaluation; payloadDigest: Buffer; artifactsDigest: Buffer; meteredCostCents: number | null } {
  assertEvidenceMatchesSchema(intent.evidenceSchema, payload);
  const evaluation = evaluate(compilePredicate(intent.predicateDsl), {
    evidence: payload,
    evidenceSchema: intent.evidenceSchema,
    amountCents: intent.amountCents,
  });
  return {
    evaluation,
    meteredCostCents: evaluation.passed ? meteredCostOf(intent, payload) : null,
    payloadDigest: Buffer.from(jsonDigestBlake3(payload, 'payload')),
    artifactsDigest: Buffer.from(artifactsDigest(artifacts)),
  };
}

/** Under `metered` release, the cost the payee's passing evidence carries at the intent's cost path: the rule's
 * `budget_cap` has already held it to an integer no greater than the amount. A negative cost releases nothing (0).
 * Null under `full` release. */
export function meteredCostOf(intent: Pick<Intent, 'intentId' | 'releaseMode' | 'meteredCostPath' | 'amountCents'>, payload: Record<string, unknown>): number | null {
  if (intent.releaseMode !== 'metered' || intent.meteredCostPath === null) return null;
  let value: unknown = payload;
  for (const segment of intent.meteredCostPath) {
    value = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, segment) ? (value as Record<string, unknown>)[segment] : undefined;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value > intent.amountCents) {
    // The policy version bound to the intent carries budget_cap at this path, so a passing rule has an integer here.
    throw new Error(`intent ${intent.intentId} passed its metered rule without an integer cost within its amount at ${intent.meteredCostPath.join('.')}`);
  }
  return Math.max(0, value);
}
