// Agent mandates `svc.agent_mandate_v1` (docs/protocol.md#mandates): verifying a signed mandate, and importing one
// for an intent. An import checks that the mandate covers the intent, consumes its nonce (single-use per tenant),
// appends the mandate and its authorization receipt to the tenant's transparency log and answers the receipt.
import type { MandateImportBody, MandateImported } from '../contracts/protocol.ts';
import type { Environment } from '../credentials/api-key.ts';
import { findIntent, type Intent } from '../db/intent-repository.ts';
import { insertMandateImport } from '../db/mandate-import-repository.ts';
import { findKeysForSubject } from '../db/registered-key-repository.ts';
import { ServiceError, type ErrorDetails } from '../errors/service-error.ts';
import type { ErrorCode } from '../errors/catalogue.ts';
import type { Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { canonicalArtifactBytes } from '../signing/artifacts.ts';
import { sha256Hex } from '../signing/digests.ts';
import { parseRecognitionProof, recognitionVerifierIdDefault } from '../signing/recognition.ts';
import { parseRfc3339SecondsUtc } from '../signing/rfc3339.ts';
import { verifyRecognition } from './recognition-service.ts';
import { canonicalBodyOf, recordReceipts, signReceipt, verifyForRoute, type ArtifactVerdict } from '../receipts/receipt-signing.ts';
import { authorizationReceiptBody, transportBindingDefault } from '../receipts/receipt-service.ts';
import { appendLeafStatement } from '../receipts/transparency-log.ts';

/** The recognition-proof purpose and path an agent binds when it imports a mandate. */
export const mandateImportPurpose = 'protocol.mandate.import';
export const mandateImportPath = '/protocol/v2/mandates';
/** The action a mandate must allow for an intent: funding it, which is what spends the principal's money. */
export const mandateIntentAction = 'harbor.intent.fund';

/** A mandate's body as `verifyArtifact` hands it over, once the kind's field table (src/signing/artifact-kinds.ts) has
 * checked every field. */
type MandateBody = {
  readonly authorization: { kind: string; tenant_id: string; principal_subject: string; principal_type: string };
  readonly agent: { subject: string; issuer: string; key_id: string; display_name: string };
  readonly allowed_actions: readonly string[];
  readonly allowed_tools: readonly string[];
  readonly spend_ceiling: { amount_minor: number; currency: string };
  readonly settlement: { default_rail: string; allowed_rails: readonly string[] };
  readonly expires_at: string;
  readonly nonce: string;
};

/** The typed view of a verified mandate body: the artifact kind's field table checked its shape, which TypeScript
 * cannot follow from the table, so this is the one assertion of it. */
const mandateBodyOf = (body: Record<string, unknown>): MandateBody => body as MandateBody;

export type MandateVerdict =
  | { readonly valid: true; readonly mandate: MandateBody; readonly digestHex: string; readonly signingKeyHex: string }
  | { readonly valid: false; readonly code: ErrorCode; readonly message: string; readonly details?: Record<string, unknown> };

const refuse = (code: ErrorCode, details?: ErrorDetails): never => {
  throw new ServiceError(code, details ? { details } : {});
};

/**
 * Verifies a signed mandate for the caller's tenant: schema_version, kind, signature (artifact codes, as every verify
 * route), the tenant it authorizes, its signer (a live registered principal key of its principal_subject; in a
 * sandbox tenant, a subject with no key registered at all is taken on the embedded key) and its expiry.
 */
export async function verifyMandate(tx: Queryable, wire: unknown, caller: { tenantId: string; environment: Environment }, nowMs: number): Promise<MandateVerdict> {
  const verdict: ArtifactVerdict = verifyForRoute(wire, {
    routeKinds: ['svc.agent_mandate_v1'],
    tenantId: caller.tenantId,
    tenantOf: (body) => mandateBodyOf(body).authorization.tenant_id,
    // Mandates are signed by the principal, not by this deployment: the registry decides below.
    trust: () => {},
  });
  if (!verdict.valid) return verdict;
  const mandate = mandateBodyOf(verdict.body);
  try {
    const keys = await findKeysForSubject(tx, caller.tenantId, 'principal', mandate.authorization.principal_subject);
    const registered = keys.some((key) => key.revokedAt === null && key.publicKey.toString('hex') === verdict.signingPublicKeyHex);
    if (!registered && !(keys.length === 0 && caller.environment === 'sandbox')) {
      refuse('mandate.signer_unregistered', { principal_subject: mandate.authorization.principal_subject });
    }
    if (parseRfc3339SecondsUtc(mandate.expires_at, 'expires_at') <= nowMs) refuse('mandate.expired', { expires_at: mandate.expires_at });
  } catch (error) {
    if (error instanceof ServiceError && (error.code === 'mandate.signer_unregistered' || error.code === 'mandate.expired')) {
      return { valid: false, code: error.code, message: error.message, ...(error.details ? { details: error.details as Record<string, unknown> } : {}) };
    }
    throw error;
  }
  return { valid: true, mandate, digestHex: verdict.messageDigestHex, signingKeyHex: verdict.signingPublicKeyHex };
}

/** Refuses a mandate that does not cover the intent: amount, currency, rail, every allowed tool, the action. */
function assertMandateCovers(mandate: MandateBody, intent: Intent): void {
  if (mandate.spend_ceiling.amount_minor < intent.amountCents) {
    refuse('mandate.spend_ceiling_exceeded', { amount_cents: intent.amountCents, amount_minor: mandate.spend_ceiling.amount_minor });
  }
  if (mandate.spend_ceiling.currency.toLowerCase() !== intent.currency) refuse('mandate.currency_mismatch', { currency: intent.currency });
  const rails = mandate.settlement.allowed_rails.length > 0 ? mandate.settlement.allowed_rails : [mandate.settlement.default_rail];
  if (!rails.includes(intent.settlementRail)) refuse('mandate.rail_not_allowed', { settlement_rail: intent.settlementRail });
  const tools = intent.allowedTools.filter((tool) => !mandate.allowed_tools.includes(tool.toLowerCase()));
  if (tools.length > 0) refuse('mandate.tool_not_allowed', { tools });
  if (!mandate.allowed_actions.includes(mandateIntentAction)) refuse('mandate.action_not_allowed', { action: mandateIntentAction });
}

/** The bytes the import's recognition proof binds: the request body without the proof, keys in the order sent. */
export function mandateImportBodyBytes(body: Readonly<Record<string, unknown>>): Uint8Array {
  const { recognition_proof: _proof, ...bound } = body;
  return Buffer.from(JSON.stringify(bound), 'utf8');
}

/** POST /protocol/v2/mandates. */
export async function importMandate(
  tx: Queryable,
  keyring: GatewayKeyring,
  caller: { tenantId: string; environment: Environment },
  request: MandateImportBody,
  nowMs = Date.now(),
): Promise<MandateImported> {
  const verdict = await verifyMandate(tx, request.signed_mandate, caller, nowMs);
  if (!verdict.valid) throw new ServiceError(verdict.code, { message: verdict.message, ...(verdict.details ? { details: verdict.details } : {}) });
  const { mandate } = verdict;
  const proof = await verifyRecognition(tx, parseRecognitionProof(request.recognition_proof), {
    purpose: mandateImportPurpose,
    method: 'POST',
    path: mandateImportPath,
    bodyBytes: mandateImportBodyBytes(request),
    tenantId: caller.tenantId,
    verifierId: recognitionVerifierIdDefault,
    nowMs,
    environment: caller.environment,
  }, { consumeNonce: true });
  if (mandate.agent.key_id !== '' && mandate.agent.key_id !== proof.keyId) refuse('mandate.agent_mismatch', { key_id: proof.keyId });

  const intentId = request.intent_id.toLowerCase();
  const intent = await findIntent(tx, caller.tenantId, intentId);
  if (!intent) throw new ServiceError('intent.not_found');
  assertMandateCovers(mandate, intent);

  const transportBinding = { ...transportBindingDefault, ...request.transport_binding };
  // One authorization receipt per import: the digest names the mandate, whose nonce imports once.
  const receiptId = `authz:${verdict.digestHex}`;
  const imported = await insertMandateImport(tx, caller.tenantId, {
    nonce: mandate.nonce,
    intentId,
    mandateDigestHex: verdict.digestHex,
    authorizationReceiptId: receiptId,
    transportBinding,
    signedMandateText: JSON.stringify(request.signed_mandate),
  });
  if (!imported) refuse('mandate.nonce_replayed');

  const receipt = signReceipt('svc.protocol_authorization_receipt_v1', authorizationReceiptBody({
    receiptId,
    nowMs,
    intentId,
    tenantId: caller.tenantId,
    transportBinding,
    mandateDigestHex: verdict.digestHex,
    mandateSigningKeyHex: verdict.signingKeyHex,
    mandate: verdict.mandate,
  }), keyring);
  // The mandate itself is a leaf too, before its receipt: the log shows what was imported, then what was granted.
  const [mandateLeaf] = await tx.batch([appendLeafStatement(caller.tenantId, {
    kind: 'svc.agent_mandate_v1',
    artifactId: verdict.digestHex,
    canonicalBytes: canonicalArtifactBytes(canonicalBodyOf(request.signed_mandate)),
    artifact: request.signed_mandate,
  })] as const);
  const [receiptLeafIndex] = await recordReceipts(tx, caller.tenantId, [{ receipt, placement: { family: 'protocol', intentId } }]);
  if (receiptLeafIndex === undefined) throw new Error('recording one receipt answered no leaf index');
  return {
    valid: true,
    intent_id: intentId,
    mandate_digest_sha256_hex: verdict.digestHex,
    mandate: verdict.mandate,
    authorization_receipt: receipt.wire,
    mandate_leaf_index: mandateLeaf.leafIndex,
    leaf_index: receiptLeafIndex,
  };
}

/** The digest of a mandate's canonical bytes, as its receipts name it (tests and docs). */
export const mandateDigestHexOf = (signedMandate: Record<string, unknown>): string => sha256Hex(canonicalArtifactBytes(canonicalBodyOf(signedMandate)));
