// `client.capabilities` and `client.spend`: verify a capability token before a paid tool runs (POST /verify,
// docs/capabilities.md#post-verify), complete the spend decision afterwards, and `guard`, which does all three around a
// tool.
import { randomUUID } from 'node:crypto';
import { checkedAnswer } from './answers.ts';
import { checkIdempotencyKey, type ClientCore } from './core.ts';
import { SvcArgumentError, SvcCapabilityError } from './errors.ts';
import type { SpendDecision, VerifyResult } from './types.ts';

export interface VerifyParams {
  readonly intentId: string;
  /** The `capability_token` of the fund answer; opaque. */
  readonly token: string;
  /** The tool about to run; must be one of the intent's allowed_tools. */
  readonly operation: string;
  /** Cents this call will spend, reserved against the intent until the decision is completed (default 0). */
  readonly requestedSpendCents?: number;
  readonly currency?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly vendorId?: string;
  readonly taskId?: string;
  readonly workflowId?: string;
  readonly agentSubject?: string;
  readonly approvalToken?: string;
  readonly modelFamily?: string;
  readonly configHashHex?: string;
  readonly promptHashHex?: string;
  /** Sent as the header and the body field; a fresh UUID when not given, so retries cannot reserve twice. */
  readonly idempotencyKey?: string;
}

export type SpendOutcome = 'consumed' | 'released';

const optionalText: readonly [keyof VerifyParams, string][] = [
  ['currency', 'currency'], ['vendorId', 'vendor_id'], ['taskId', 'task_id'], ['workflowId', 'workflow_id'], ['toolCallId', 'tool_call_id'],
  ['toolName', 'tool_name'], ['agentSubject', 'agent_subject'], ['approvalToken', 'approval_token'], ['modelFamily', 'model_family'],
];
const uuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The /verify body as the reference client builds it: optional strings trimmed and left out when empty, hashes lowercased. */
function verifyBody(params: VerifyParams, idempotencyKey: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    intent_id: params.intentId,
    token: params.token,
    operation: params.operation,
    requested_spend_cents: params.requestedSpendCents ?? 0,
  };
  for (const [option, field] of optionalText) {
    const value = params[option];
    if (typeof value === 'string' && value.trim() !== '') body[field] = value.trim();
  }
  if (params.configHashHex) body['config_hash_hex'] = params.configHashHex.trim().toLowerCase();
  if (params.promptHashHex) body['prompt_hash_hex'] = params.promptHashHex.trim().toLowerCase();
  body['idempotency_key'] = idempotencyKey;
  return body;
}

export class Spend {
  readonly #core: ClientCore;

  constructor(core: ClientCore) {
    this.#core = core;
  }

  /** Finalizes a /verify reservation: `consumed` after the tool ran, `released` when it did not. Completing again
   * with the same outcome answers the same decision, so the call is retried like an idempotent one. */
  async complete(decisionId: string, outcome: SpendOutcome): Promise<SpendDecision> {
    if (!uuidPattern.test(decisionId)) throw new SvcArgumentError(`decisionId must be a UUID, got ${JSON.stringify(decisionId)}.`);
    if (outcome !== 'consumed' && outcome !== 'released') throw new SvcArgumentError('outcome is "consumed" or "released".');
    const { body, response } = await this.#core.post(`/v1/spend/decisions/${decisionId}/complete`, { outcome }, { retrySafe: true });
    return checkedAnswer('SpendDecision', body, response);
  }
}

export class Capabilities {
  readonly #core: ClientCore;
  readonly #spend: Spend;

  constructor(core: ClientCore, spend: Spend) {
    this.#core = core;
    this.#spend = spend;
  }

  /**
   * Asks the gateway whether the token allows this call now. Allowed: the result, with a `decision_id` that
   * reserves the spend. Denied: throws `SvcCapabilityError` (its `code` and `reason_codes` say why), unless
   * `throwOnDeny: false`, which returns the deny result instead.
   */
  async verify(params: VerifyParams, options: { throwOnDeny?: boolean } = {}): Promise<VerifyResult> {
    const idempotencyKey = checkIdempotencyKey(params.idempotencyKey ?? randomUUID());
    const { body, response } = await this.#core.post('/verify', verifyBody(params, idempotencyKey), { retrySafe: true, headers: { 'idempotency-key': idempotencyKey } });
    this.#core.checkEcho(body, response, params.intentId);
    const result = checkedAnswer('CapabilityVerdict', body, response);
    if (!result.allow && options.throwOnDeny !== false) throw new SvcCapabilityError(result);
    return result;
  }

  /**
   * Runs a paid tool under a capability: verify (throws `SvcCapabilityError` when denied), run `tool`, then complete
   * the decision — `consumed` when the tool returned, `released` (best effort) when it threw, and rethrows.
   */
  async guard<T>(params: VerifyParams, tool: (decision: VerifyResult) => Promise<T> | T): Promise<T> {
    const decision = await this.verify(params);
    let result: T;
    try {
      result = await tool(decision);
    } catch (error) {
      if (decision.decision_id) await this.#spend.complete(decision.decision_id, 'released').catch(() => undefined);
      throw error;
    }
    if (decision.decision_id) await this.#spend.complete(decision.decision_id, 'consumed');
    return result;
  }
}
