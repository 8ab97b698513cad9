// Protocol receipts (docs/protocol.md#protocol-receipts): the authorization receipt of a mandate import, the
// settlement receipt of an intent's terminal state, and the terminal effect that issues the settlement receipt and
// the intent-terminal agent receipt in the settling transaction (no terminal intent without its receipts, no receipt
// without its ledger posting).
import type { ExternalAttestation, ReceiptInclusionProof, SignedArtifact } from '../contracts/protocol.ts';
import { evidenceAttestationsStatement } from '../db/evidence-repository.ts';
import type { Intent } from '../db/intent-repository.ts';
import { latestMandateImportStatement, type MandateImport } from '../db/mandate-import-repository.ts';
import { findReceipt, findReceiptStatement, type StoredReceipt } from './protocol-receipt-repository.ts';
import { mandateAttestationKind } from '../engine/decide/attestations.ts';
import type { AnswerFields, TerminalEffect, TerminalTransition } from '../engine/effects.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { externalAttestationReferenceLengthMax } from '../limits.ts';
import { recognitionVerifierIdDefault } from '../signing/recognition.ts';
import { formatRfc3339SecondsUtc } from '../signing/rfc3339.ts';
import { actionReceiptId, digestNotReportedHex, sandboxToolCallIdOf, signSandboxActionReceipt, signTerminalAgentReceipt } from './agent-receipt-service.ts';
import { queueReceipts, signReceipt, storedReceiptInclusionProof, type SignedReceipt } from './receipt-signing.ts';

/** The verifier this deployment names in the receipts it signs (the recognition proofs' default verifier). */
export const receiptVerifierId = recognitionVerifierIdDefault;

/** How the escrow moved: on the rails' simulators for the sandbox guardrail intents, else on this service's ledger. */
export function settlementModeOf(intent: Intent): string {
  return intent.signingVersion === 0 ? 'simulated' : 'ledger_escrow';
}

/** The transport binding of a receipt with no mandate behind it: the protocol default. */
export const transportBindingDefault = { source_protocol: 'ap2' } as const;

/** What a settlement receipt names as its authorization when no mandate was imported for the intent (the intent's
 * principal signed it, or for a sandbox guardrail intent the tenant's key created it): the client's verifier takes
 * neither an empty id nor an empty digest, so the absence has a value, like the agent receipts' unreported digests. */
export const authorizationReceiptIdNone = 'none';

/** Builds and signs an intent's settlement receipt (its id is the intent id). */
function signSettlementReceipt(transition: TerminalTransition, mandate: MandateImport | undefined, keyring: GatewayKeyring): SignedReceipt {
  const intent = transition.intent;
  const settledAtMs = intent.settledAt?.getTime() ?? transition.nowMs;
  return signReceipt('svc.protocol_settlement_receipt_v1', {
    receipt_id: intent.intentId,
    issued_at: formatRfc3339SecondsUtc(transition.nowMs),
    intent_id: intent.intentId,
    tenant_id: intent.tenantId,
    verifier_id: receiptVerifierId,
    transport_binding: mandate?.transportBinding ?? transportBindingDefault,
    authorization_receipt_id: mandate?.authorizationReceiptId ?? authorizationReceiptIdNone,
    mandate_digest_sha256_hex: mandate?.mandateDigestHex ?? digestNotReportedHex,
    harbor_state: intent.state,
    ...(intent.predicatePassed === null ? {} : { predicate_passed: intent.predicatePassed }),
    settlement_rail: intent.settlementRail,
    settlement_mode: settlementModeOf(intent),
    principal_did: intent.principalDid,
    payee_did: intent.payeeDid,
    currency: intent.currency,
    amount_cents: intent.amountCents,
    terminal_observed_at: formatRfc3339SecondsUtc(settledAtMs),
  }, keyring);
}

/**
 * The attestations an agent receipt of the intent lists: the imported mandate first (the client's verifier requires
 * an `agent_mandate_v1` entry with the digest the receipt names in authorization.mandate_digest_sha256_hex), then
 * what the client attested with the evidence.
 */
export function withMandateAttestation(mandate: MandateImport | undefined, attestations: readonly ExternalAttestation[]): ExternalAttestation[] {
  if (!mandate) return [...attestations];
  const binding = mandate.transportBinding as { source_protocol?: string; external_authorization_id?: string };
  const reference = binding.external_authorization_id || mandate.nonce;
  const entry: ExternalAttestation = {
    source: binding.source_protocol ?? transportBindingDefault.source_protocol,
    kind: mandateAttestationKind,
    digest_sha256_hex: mandate.mandateDigestHex,
    ...(reference.length <= externalAttestationReferenceLengthMax ? { reference_id: reference } : {}),
  };
  // The client may have attested the same mandate itself: listed once.
  const others = attestations.filter((other) => !(other.kind === entry.kind && other.digest_sha256_hex === entry.digest_sha256_hex));
  return [entry, ...others];
}

/**
 * The terminal effect: the settlement receipt, the intent-terminal agent receipt and, when a tool call's evidence
 * settled the intent in this request, that call's action receipt (unless that call has one already). One round
 * trip, for what the receipts refer to (the intent's mandate import, the tool call's receipt); the log appends and
 * the receipt rows travel with COMMIT, with the ledger posting and the state change.
 */
export const receiptsOnTerminal: TerminalEffect = async (tx, transition, keyring): Promise<AnswerFields> => {
  const { intent, toolCall } = transition;
  const tenantId = intent.tenantId;
  const mandateStatement = latestMandateImportStatement(tenantId, intent.intentId);
  // The evidence's attestations: the call that settles the intent now carries them, else they were stored with the
  // evidence (confirm); read in the same round trip as the mandate.
  let mandate: MandateImport | undefined;
  let existingAction: StoredReceipt | undefined;
  let attestations: readonly ExternalAttestation[];
  if (toolCall) {
    [mandate, existingAction] = await tx.batch([mandateStatement, findReceiptStatement(tenantId, 'agent', actionReceiptId(intent.intentId, sandboxToolCallIdOf(transition)))] as const);
    attestations = toolCall.externalAttestations;
  } else {
    [mandate, attestations] = await tx.batch([mandateStatement, evidenceAttestationsStatement(tenantId, intent.intentId)] as const);
  }
  const settlement = signSettlementReceipt(transition, mandate, keyring);
  const terminal = signTerminalAgentReceipt(transition, keyring, settlement, {
    mandateDigestHex: mandate?.mandateDigestHex,
    attestations: withMandateAttestation(mandate, attestations),
  });
  const action = toolCall && !existingAction ? signSandboxActionReceipt({ ...transition, toolCall }, keyring) : undefined;
  queueReceipts(tx, tenantId, [
    { receipt: settlement, placement: { family: 'protocol', intentId: intent.intentId } },
    { receipt: terminal, placement: { family: 'agent', scope: 'intent_terminal', intentId: intent.intentId } },
    ...(action ? [{ receipt: action, placement: { family: 'agent' as const, scope: 'action' as const, intentId: intent.intentId, toolCallId: sandboxToolCallIdOf(transition) } }] : []),
  ]);
  if (!toolCall) return {};
  return { agent_receipt: action?.wire ?? existingAction!.wire, agent_receipt_intent_terminal: terminal.wire };
};

/** An authorization receipt for an imported mandate (its id is minted from the mandate digest: one per import). */
export function authorizationReceiptBody(params: {
  readonly receiptId: string;
  readonly nowMs: number;
  readonly intentId: string;
  readonly tenantId: string;
  readonly transportBinding: Record<string, unknown>;
  readonly mandateDigestHex: string;
  readonly mandateSigningKeyHex: string;
  readonly mandate: Record<string, unknown>;
}): Record<string, unknown> {
  const mandate = params.mandate;
  return {
    receipt_id: params.receiptId,
    issued_at: formatRfc3339SecondsUtc(params.nowMs),
    status: 'authorized',
    intent_id: params.intentId,
    tenant_id: params.tenantId,
    verifier_id: receiptVerifierId,
    transport_binding: params.transportBinding,
    mandate_digest_sha256_hex: params.mandateDigestHex,
    imported_mandate_signing_public_key_ed25519_hex: params.mandateSigningKeyHex,
    authorization: mandate.authorization,
    agent: mandate.agent,
    allowed_actions: mandate.allowed_actions,
    allowed_tools: mandate.allowed_tools,
    spend_ceiling: mandate.spend_ceiling,
    settlement: mandate.settlement,
    constraint: mandate.constraint,
    expires_at: mandate.expires_at,
    nonce: mandate.nonce,
    human_presence_mode: mandate.human_presence_mode,
  };
}

async function findProtocolReceipt(tx: Queryable, tenantId: string, receiptId: string): Promise<StoredReceipt> {
  const stored = await findReceipt(tx, tenantId, 'protocol', receiptId);
  if (!stored) throw new ServiceError('receipt.not_found');
  return stored;
}

/** GET /protocol/v2/receipts/{id}: the tenant's protocol receipt, signed, as issued; 404 for another tenant's id too. */
export async function readProtocolReceipt(tx: Queryable, tenantId: string, receiptId: string): Promise<SignedArtifact> {
  return (await findProtocolReceipt(tx, tenantId, receiptId)).wire;
}

/** GET /protocol/v2/receipts/{id}/inclusion-proof: where the receipt stands in the tenant's log. */
export async function readProtocolReceiptInclusionProof(tx: Queryable, tenantId: string, receiptId: string): Promise<ReceiptInclusionProof> {
  return storedReceiptInclusionProof(tx, tenantId, await findProtocolReceipt(tx, tenantId, receiptId));
}
