// A2A task contracts (docs/protocol.md#task-contracts): each intent of the tenant as a contract an A2A peer can
// read before it takes the task: the rule that releases the money, the amount, the deadline, the allowed tools and
// the payee. Read from the intents themselves; nothing is stored for them.
import type { TaskContract, TaskContractPage, TaskContractRule } from '../contracts/protocol.ts';
import { findIntent, listIntents, type Intent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { canonicalJson } from '../signing/canonical-json.ts';
import { sha256Hex } from '../signing/digests.ts';

export const taskContractKind = 'svc.a2a_task_contract_v1';

/** How the intent's money is released: its bound policy version, a completion preset, or an inline predicate. */
function ruleOf(intent: Intent): TaskContractRule {
  const predicate = { predicate_dsl: intent.predicateDsl, predicate_digest_sha256_hex: sha256Hex(canonicalJson(intent.predicateDsl)) };
  if (intent.policyTemplateId !== null) {
    return {
      kind: 'policy',
      template_id: intent.policyTemplateId,
      version_seq: intent.policyVersionSeq,
      content_digest_sha256_hex: intent.policyContentDigest?.toString('hex') ?? null,
      ...predicate,
    };
  }
  if (intent.completionPresetId !== null) return { kind: 'preset', completion_preset_id: intent.completionPresetId, ...predicate };
  return { kind: 'predicate', ...predicate };
}

export function taskContractOf(intent: Intent): TaskContract {
  return {
    kind: taskContractKind,
    contract_id: intent.intentId,
    intent_id: intent.intentId,
    tenant_id: intent.tenantId,
    state: intent.state,
    rule: ruleOf(intent),
    evidence_schema: intent.evidenceSchema,
    amount_cents: intent.amountCents,
    currency: intent.currency,
    deadline: intent.deadlineText,
    allowed_tools: [...intent.allowedTools],
    payee_did: intent.payeeDid,
    principal_did: intent.principalDid,
    settlement_rail: intent.settlementRail,
    created_at: intent.createdAt.toISOString(),
  };
}

export async function readTaskContract(tx: Queryable, tenantId: string, contractId: string): Promise<TaskContract> {
  const intent = await findIntent(tx, tenantId, contractId.toLowerCase());
  if (!intent) throw new ServiceError('task_contract.not_found');
  return taskContractOf(intent);
}

/** A page of contracts, newest first; the cursor is the last contract id of the previous page. */
export async function listTaskContracts(
  tx: Queryable,
  tenantId: string,
  page: { limit: number; cursor?: string | undefined },
): Promise<TaskContractPage> {
  const startingAfter = page.cursor?.toLowerCase();
  const found = await listIntents(tx, tenantId, { limit: page.limit, startingAfter });
  // Only an empty page can come from an unknown cursor (another tenant's contract included): say so, as intents do.
  if (found.intents.length === 0 && startingAfter !== undefined && !(await findIntent(tx, tenantId, startingAfter))) {
    throw new ServiceError('task_contract.not_found', { details: { cursor: startingAfter } });
  }
  const items = found.intents.map(taskContractOf);
  return {
    object: 'list',
    items,
    limit: page.limit,
    has_more: found.hasMore,
    next_cursor: found.hasMore ? found.intents.at(-1)!.intentId : null,
  };
}
