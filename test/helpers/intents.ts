// Builds engine request bodies the way a client does: principal-signed creation envelopes (v6, v7) and
// payee-signed evidence, with real Ed25519 keys.
import { randomBytes, randomUUID } from 'node:crypto';
import { bytesToBase64 } from '../../src/signing/encoding.ts';
import { ed25519SignerFromSeed, type Ed25519Signer } from '../../src/signing/ed25519.ts';
import { evidenceSigningBytes, intentCreationSigningBytes } from '../../src/signing/signed-structs.ts';

export interface Party {
  readonly did: string;
  readonly signer: Ed25519Signer;
  readonly publicKeyBase64: string;
}

export function party(did: string): Party {
  const signer = ed25519SignerFromSeed(randomBytes(32));
  return { did, signer, publicKeyBase64: bytesToBase64(signer.publicKey.bytes) };
}

export interface CreateOptions {
  readonly tenantId: string;
  readonly principal: Party;
  readonly payee: Party;
  readonly intentId?: string;
  readonly amountCents?: number;
  readonly currency?: string;
  readonly deadline?: string;
  readonly settlementRail?: string;
  readonly predicate?: Record<string, unknown>;
  /** v6 by reference: the envelope names this `predicate_ref` instead of carrying `predicate_dsl`, and is signed
   * over `predicate`, the rule the reference resolves to. */
  readonly predicateRef?: string;
  /** With `predicateRef`: send `predicate` inline beside the reference too, signed over `predicate`, as the public
   * client's v6 builder does when given both. */
  readonly inlineBesideRef?: boolean;
  readonly evidenceSchema?: Record<string, unknown>;
  readonly allowedTools?: string[];
  /** v7: the head version the intent binds to. */
  readonly policy?: { templateId: string; versionSeq: number; contentDigestHex: string; materializedPredicate: Record<string, unknown> };
  /** Signs for this tenant instead (a forgery test). */
  readonly signForTenantId?: string;
  readonly signingVersion?: number;
}

export const inOneHour = () => new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function signedCreateBody(options: CreateOptions): Record<string, unknown> {
  const version = options.signingVersion ?? (options.policy ? 7 : 6);
  const predicate = options.policy?.materializedPredicate ?? options.predicate ?? { version: 1, root: { op: 'completion', path: ['status'], value: 'completed' } };
  const fields = {
    intent_id: options.intentId ?? randomUUID(),
    principal_did: options.principal.did,
    payee_did: options.payee.did,
    budget: { max: options.amountCents ?? 500 },
    currency: options.currency ?? 'usd',
    amount_cents: options.amountCents ?? 500,
    evidence_schema: options.evidenceSchema ?? { type: 'object', properties: { status: { type: 'string' }, cost_cents: { type: 'integer' } }, required: ['status'] },
    deadline: options.deadline ?? inOneHour(),
    settlement_rail: options.settlementRail ?? 'x402_usdc_base',
    allowed_tools: options.allowedTools ?? ['search.web', 'Harbor.Evidence_Submit'],
  };
  const bytes = intentCreationSigningBytes({
    signing_version: version,
    tenant_id: options.signForTenantId ?? options.tenantId,
    ...fields,
    predicate,
    predicate_ref: options.predicateRef ?? '',
    payee_pubkey: options.payee.signer.publicKey.bytes,
    ...(options.policy
      ? { policy: { policy_template_id: options.policy.templateId, policy_version_seq: options.policy.versionSeq, policy_content_digest: Buffer.from(options.policy.contentDigestHex, 'hex') } }
      : {}),
  });
  return {
    intent_id: fields.intent_id,
    principal_did: fields.principal_did,
    principal_pubkey: options.principal.publicKeyBase64,
    principal_signature: bytesToBase64(options.principal.signer.sign(bytes)),
    payee_did: fields.payee_did,
    payee_pubkey: options.payee.publicKeyBase64,
    budget: fields.budget,
    currency: fields.currency,
    amount_cents: fields.amount_cents,
    evidence_schema: fields.evidence_schema,
    deadline: fields.deadline,
    ...(options.policy || (options.predicateRef !== undefined && !options.inlineBesideRef) ? {} : { predicate_dsl: predicate }),
    ...(options.policy || options.predicateRef === undefined ? {} : { predicate_ref: options.predicateRef }),
    settlement_rail: fields.settlement_rail,
    signing_version: version,
    policy_binding: options.policy ? { template_id: options.policy.templateId, version_seq: options.policy.versionSeq } : null,
    allowed_tools: fields.allowed_tools,
  };
}

export function signedEvidenceBody(options: {
  tenantId: string;
  intentId: string;
  payee: Party;
  payload: unknown;
  artifacts?: string[];
  submittedAt?: string;
}): Record<string, unknown> {
  const submittedAt = options.submittedAt ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const artifacts = options.artifacts ?? [];
  const bytes = evidenceSigningBytes({
    tenant_id: options.tenantId, intent_id: options.intentId, payee_did: options.payee.did, payload: options.payload, artifacts, submitted_at: submittedAt,
  });
  return {
    payload: options.payload,
    artifacts,
    payee_did: options.payee.did,
    payee_pubkey: options.payee.publicKeyBase64,
    payee_signature: bytesToBase64(options.payee.signer.sign(bytes)),
    submitted_at: submittedAt,
  };
}
