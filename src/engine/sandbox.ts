// Sandbox guardrails (docs/capabilities.md): a sandbox tenant's key alone creates an unsigned intent
// (signing_version 0), funds it through the simulator and hands back its capability token, in one transaction;
// evidence for it is then evaluated and settled at once. Nothing here is reachable by a live tenant, and the
// evidence route never touches a signed intent. What each command does is decided purely
// (src/engine/decide/sandbox.ts); this file writes it, funding and settling as the fund and confirm commands do.
import { randomUUID } from 'node:crypto';
import type { SandboxBootstrapBody, SandboxEvidenceBody } from '../contracts/sandbox.ts';
import type { Principal } from '../credentials/principal.ts';
import { queueEvidenceInsert } from '../db/evidence-repository.ts';
import { insertIntent, lockIntent, queueEvidenceRecordedTransition, type LockedIntent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import { railAdapterFor } from '../rails/index.ts';
import { bootstrapAnswer, bootstrapCurrency, decideBootstrap, decideSandboxEvidence, sandboxEvidenceAnswer, sandboxSettlementRail } from './decide.ts';
import type { EngineEffects } from './effects.ts';
import { issueCapabilityToken, recordFunding } from './fund.ts';
import { fromStates } from './lifecycle.ts';
import { checkIntentState } from './pipeline.ts';
import { settleOrHold } from './settle.ts';

/** 403 for a live tenant: the guardrail routes create and settle money-less simulated intents only. */
export function assertSandboxTenant(principal: Principal): void {
  if (principal.environment !== 'sandbox') throw new ServiceError('sandbox.live_tenant');
}

export async function bootstrapGuardrail(
  tx: Queryable,
  principal: Principal,
  keyring: GatewayKeyring,
  body: SandboxBootstrapBody,
  nowMs = Date.now(),
): Promise<Record<string, unknown>> {
  // The same rail rules as real funding (the x402 rail carries usd only); the simulator stands in for the handshake.
  const adapter = await railAdapterFor(sandboxSettlementRail, { environment: 'sandbox', config: undefined, currency: bootstrapCurrency(body) });
  const decision = decideBootstrap(principal.tenantId, body, nowMs, { intentId: randomUUID(), fundingReference: `sim_${randomUUID()}` });
  const intent = await insertIntent(tx, decision.intent);
  // What a settled funding attempt does, without the 402 handshake: the simulator stands for the rail.
  const funded = recordFunding(tx, intent, adapter.rail, decision.fundingReference, decision.transition);
  return bootstrapAnswer(decision, funded, await issueCapabilityToken(keyring, funded));
}

/** A sandbox guardrail intent of this tenant, locked; any other intent (signed, another tenant's, unknown) is 404. */
async function lockGuardrailIntent(tx: Queryable, tenantId: string, intentId: string): Promise<LockedIntent> {
  const intent = await lockIntent(tx, tenantId, intentId.toLowerCase());
  return checkIntentState(intent?.signingVersion === 0 ? intent : undefined, fromStates('sandboxEvidence'));
}

export async function submitGuardrailEvidence(
  tx: Queryable,
  tenantId: string,
  intentId: string,
  body: SandboxEvidenceBody,
  effects: EngineEffects,
  nowMs = Date.now(),
): Promise<Record<string, unknown>> {
  const intent = await lockGuardrailIntent(tx, tenantId, intentId);
  const decision = decideSandboxEvidence(intent, body, nowMs);
  queueEvidenceInsert(tx, tenantId, decision.record);
  const recorded = queueEvidenceRecordedTransition(tx, intent, decision.evaluation.passed, decision.meteredCostCents);
  // A passing rule meets the release gate first: in critical_hold a critical signal holds the intent for review.
  const outcome = await settleOrHold(tx, recorded, effects, { command: 'sandboxEvidence', nowMs, toolCall: decision.toolCall });
  return sandboxEvidenceAnswer({ tenantId, intentId, body }, intent, decision, outcome);
}
