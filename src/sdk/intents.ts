// `client.intents`: build and sign creation envelopes (v6 with a predicate, v7 bound to the policy head), fund
// through the 402 handshake, submit payee-signed evidence, confirm settlement, and read intents and their evidence.
import { randomUUID } from 'node:crypto';
import {
  base64ToBytes,
  bytesToBase64,
  evidenceSigningBytes,
  formatRfc3339SecondsUtc,
  hexToBytes,
  intentCreationSigningBytes,
  recognitionPurposes,
} from '../signing/index.ts';
import { checkedAnswer, type Answer } from './answers.ts';
import { intentPath, type ClientCore } from './core.ts';
import { SvcArgumentError } from './errors.ts';
import { fundIntent, type FundOptions, type FundResult } from './funding.ts';
import { withSigningErrors, type SvcSigningKey } from './keys.ts';
import type { Policies } from './policies.ts';
import { jsonObjectOf, type TransportResponse } from './transport.ts';
import type { EvidenceAnswer, EvidenceSubmissionList, Intent, IntentList, IntentState, JsonObject, PolicyVersion, SettlementAnswer, SettlementRail } from './types.ts';

export interface SigningParty {
  readonly did: string;
  readonly key: SvcSigningKey;
}

export interface PayeeParty {
  readonly did: string;
  /** The payee's public key: its `SvcSigningKey`, 32 raw bytes, or standard base64. */
  readonly publicKey: SvcSigningKey | Uint8Array | string;
}

/** A v7 binding: the policy head of `templateId` (fetched), or a version already read (no request). */
export type PolicyBindingInput = { readonly templateId: string; readonly versionSeq?: number } | PolicyVersion;

export interface CreateIntentParams {
  /** Signs the envelope. */
  readonly principal: SigningParty;
  /** Its public key is committed in the signature; only this payee can later sign evidence. */
  readonly payee: PayeeParty;
  readonly amountCents: number;
  /** Lowercase ISO 4217; both rails carry `usd` (the default). */
  readonly currency?: string;
  /** RFC 3339 text, or a Date (sent in whole seconds, UTC). */
  readonly deadline: string | Date;
  readonly settlementRail: SettlementRail;
  /** The tools a capability of this intent may be verified for. */
  readonly allowedTools: readonly string[];
  /** Defaults to `{"type": "object"}`. */
  readonly evidenceSchema?: JsonObject;
  /** Defaults to `{"max": amountCents}`. */
  readonly budget?: JsonObject;
  /** v6: the release rule inline. Give exactly one of predicate, predicateRef and policyBinding. */
  readonly predicate?: JsonObject;
  /** v6: a policy version by reference, `"<template_id>@<version_seq>"` (its materialized rule is signed). */
  readonly predicateRef?: string;
  /** v7: bound to the tenant's policy head. */
  readonly policyBinding?: PolicyBindingInput;
  /** Client-chosen UUID; a fresh v4 when not given. */
  readonly intentId?: string;
  readonly idempotencyKey?: string;
}

export interface SubmitEvidenceParams {
  /** The payee committed at creation; signs `EvidenceSignV1`. */
  readonly payee: SigningParty;
  /** The evidence object, checked against the intent's evidence_schema and evaluated by its rule. */
  readonly payload: JsonObject;
  /** 64-hex BLAKE3 hashes of out-of-band artifacts. */
  readonly artifacts?: readonly string[];
  /** Defaults to now, in whole seconds. */
  readonly submittedAt?: string | Date;
  readonly idempotencyKey?: string;
}

export interface ConfirmParams {
  /** A guard: the engine refuses (409, nothing moved) when the rule implies the other action. */
  readonly expectedAction?: 'release' | 'refund' | 'split';
  readonly idempotencyKey?: string;
}

const rfc3339Of = (value: string | Date, field: string): string => {
  if (typeof value === 'string') return value;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new SvcArgumentError(`${field} must be RFC 3339 text or a valid Date.`);
  return formatRfc3339SecondsUtc(value.getTime());
};

const isPolicyVersion = (binding: PolicyBindingInput): binding is PolicyVersion => (binding as PolicyVersion).object === 'policy_version';

function payeePublicKeyBase64(publicKey: PayeeParty['publicKey']): string {
  if (typeof publicKey === 'string') return publicKey;
  if (publicKey instanceof Uint8Array) return bytesToBase64(publicKey);
  return publicKey.publicKeyBase64;
}

/** The rule the principal signs: v6 inline, v6 by reference, or v7 bound to a version. */
interface SignedRule {
  readonly version: 6 | 7;
  readonly predicate: JsonObject;
  readonly predicateRef: string;
  readonly policy?: PolicyVersion;
}

export class Intents {
  readonly #core: ClientCore;
  readonly #policies: Policies;

  constructor(core: ClientCore, policies: Policies) {
    this.#core = core;
    this.#policies = policies;
  }

  /** Builds, signs (principal key) and sends a v6 or v7 creation envelope. Answers the created intent (`open`). */
  async create(params: CreateIntentParams): Promise<Intent> {
    const rule = await this.#ruleOf(params);
    const intentId = params.intentId ?? randomUUID();
    const fields = {
      intent_id: intentId,
      principal_did: params.principal.did,
      payee_did: params.payee.did,
      budget: params.budget ?? { max: params.amountCents },
      currency: params.currency ?? 'usd',
      amount_cents: params.amountCents,
      evidence_schema: params.evidenceSchema ?? { type: 'object' },
      deadline: rfc3339Of(params.deadline, 'deadline'),
      settlement_rail: params.settlementRail,
      allowed_tools: [...params.allowedTools],
    };
    const payeePubkey = payeePublicKeyBase64(params.payee.publicKey);
    const signature = withSigningErrors(() => {
      const bytes = intentCreationSigningBytes({
        signing_version: rule.version,
        tenant_id: this.#core.tenantId,
        ...fields,
        predicate: rule.predicate,
        predicate_ref: rule.predicateRef,
        payee_pubkey: base64ToBytes(payeePubkey, 'payee_pubkey', 32),
        ...(rule.policy
          ? { policy: { policy_template_id: rule.policy.template_id, policy_version_seq: rule.policy.version_seq, policy_content_digest: hexToBytes(rule.policy.content_digest, 'content_digest', 32) } }
          : {}),
      });
      return bytesToBase64(params.principal.key.sign(bytes));
    });
    // Field order as the reference client sends it (docs/wire-compatibility.md#the-client); the proof hashes these
    // exact bytes.
    const body = {
      intent_id: intentId,
      principal_did: fields.principal_did,
      principal_pubkey: params.principal.key.publicKeyBase64,
      principal_signature: signature,
      payee_did: fields.payee_did,
      payee_pubkey: payeePubkey,
      budget: fields.budget,
      currency: fields.currency,
      amount_cents: fields.amount_cents,
      evidence_schema: fields.evidence_schema,
      deadline: fields.deadline,
      ...(rule.version === 6 && rule.predicateRef === '' ? { predicate_dsl: rule.predicate } : {}),
      settlement_rail: fields.settlement_rail,
      signing_version: rule.version,
      policy_binding: rule.policy ? { template_id: rule.policy.template_id, version_seq: rule.policy.version_seq } : null,
      allowed_tools: fields.allowed_tools,
      ...(rule.predicateRef === '' ? {} : { predicate_ref: rule.predicateRef }),
    };
    const response = await this.#core.mutate({ path: '/harbor/intents', purpose: recognitionPurposes.intentCreate, body, idempotencyKey: params.idempotencyKey });
    return this.#answerAbout('Intent', response, intentId);
  }

  /** Funds an open intent through its rail's 402 handshake; see `FundOptions`. */
  fund(intentId: string, options: FundOptions): Promise<FundResult> {
    return fundIntent(this.#core, intentId, options);
  }

  /** Signs `EvidenceSignV1` with the payee key and submits it; the answer says whether the rule passed. */
  async submitEvidence(intentId: string, params: SubmitEvidenceParams): Promise<EvidenceAnswer> {
    const path = intentPath(intentId, '/evidence');
    const submittedAt = params.submittedAt === undefined ? formatRfc3339SecondsUtc(this.#core.now()) : rfc3339Of(params.submittedAt, 'submittedAt');
    const artifacts = [...(params.artifacts ?? [])];
    const signature = withSigningErrors(() =>
      bytesToBase64(
        params.payee.key.sign(
          evidenceSigningBytes({ tenant_id: this.#core.tenantId, intent_id: intentId, payee_did: params.payee.did, payload: params.payload, artifacts, submitted_at: submittedAt }),
        ),
      ),
    );
    const body = {
      payload: params.payload,
      artifacts,
      payee_did: params.payee.did,
      payee_pubkey: params.payee.key.publicKeyBase64,
      payee_signature: signature,
      submitted_at: submittedAt,
    };
    const response = await this.#core.mutate({ path, purpose: recognitionPurposes.evidenceSubmit, body, idempotencyKey: params.idempotencyKey });
    return this.#answerAbout('EvidenceAnswer', response, intentId);
  }

  /** Carries out what the stored evaluation implies: release (rule passed) or refund (failed, or deadline passed). */
  async confirm(intentId: string, params: ConfirmParams = {}): Promise<SettlementAnswer> {
    const path = intentPath(intentId, '/settlement/confirm');
    const body = params.expectedAction === undefined ? {} : { expected_action: params.expectedAction };
    const response = await this.#core.mutate({ path, purpose: recognitionPurposes.settlementConfirm, body, idempotencyKey: params.idempotencyKey });
    return this.#answerAbout('SettlementAnswer', response, intentId);
  }

  async get(intentId: string): Promise<Intent> {
    const { response } = await this.#core.get(intentPath(intentId));
    return this.#answerAbout('Intent', response, intentId);
  }

  /** Newest first; pass `next_cursor` back as `cursor` for the next page. */
  async list(params: { limit?: number; state?: IntentState; cursor?: string } = {}): Promise<IntentList> {
    const { body, response } = await this.#core.get('/harbor/intents', { limit: params.limit, state: params.state, cursor: params.cursor });
    const list = checkedAnswer('IntentList', body, response);
    for (const intent of list.data) this.#core.checkEcho(intent, response);
    return list;
  }

  /** The evidence submitted for the intent as stored, newest first, each with its outcome and evaluation trace. */
  async listEvidence(intentId: string, params: { limit?: number; cursor?: string } = {}): Promise<EvidenceSubmissionList> {
    const { body, response } = await this.#core.get(intentPath(intentId, '/evidence'), { limit: params.limit, cursor: params.cursor });
    const list = checkedAnswer('EvidenceSubmissionList', body, response);
    for (const submission of list.data) this.#core.checkEcho(submission, response, intentId);
    return list;
  }

  /** An answer about one intent: it must name this tenant and this intent (TenantBindingError first, whatever else
   * is wrong), then match its contract. */
  #answerAbout<Name extends 'Intent' | 'EvidenceAnswer' | 'SettlementAnswer'>(name: Name, response: TransportResponse, intentId: string): Answer<Name> {
    const body = jsonObjectOf(response);
    this.#core.checkEcho(body, response, intentId);
    return checkedAnswer(name, body, response);
  }

  async #ruleOf(params: CreateIntentParams): Promise<SignedRule> {
    const given = [params.predicate, params.predicateRef, params.policyBinding].filter((value) => value !== undefined).length;
    if (given !== 1) throw new SvcArgumentError('Give exactly one of predicate (v6), predicateRef (v6) and policyBinding (v7).');
    if (params.predicate !== undefined) return { version: 6, predicate: params.predicate, predicateRef: '' };
    if (params.predicateRef !== undefined) {
      const match = /^([a-z0-9_]{1,64})@([1-9][0-9]{0,8})$/.exec(params.predicateRef);
      if (!match) throw new SvcArgumentError('predicateRef is "<template_id>@<version_seq>".');
      const version = await this.#policies.version(match[1]!, Number(match[2]));
      return { version: 6, predicate: version.materialized_predicate, predicateRef: params.predicateRef };
    }
    const binding = params.policyBinding!;
    const version = isPolicyVersion(binding) ? binding : await this.#policies.version(binding.templateId, binding.versionSeq);
    return { version: 7, predicate: version.materialized_predicate, predicateRef: '', policy: version };
  }
}
