// The release gate's decision, pure (docs/release-gate.md): given a tenant's gate configuration and what is known of
// a release about to happen (the payee's standing, whether it was ever paid by this tenant, the amount), the signals
// it meets and whether the release is held for review instead. Few signals, each documented and each a tenant
// setting; every signal found is critical, since a tenant turns on only what it wants to stop a release for.
// src/engine/settle.ts loads the facts, asks, and writes what this decides.
import { transitionOf, type Transition } from '../lifecycle.ts';
import type { SettlingCommand } from './settlement.ts';

export const releaseGateModes = ['review_only', 'critical_hold'] as const;
export type ReleaseGateMode = (typeof releaseGateModes)[number];

export const fraudSignalCodes = ['payee_standing_below_threshold', 'first_settlement_with_payee', 'amount_over_limit'] as const;
export type FraudSignalCode = (typeof fraudSignalCodes)[number];
export type FraudSeverity = 'elevated' | 'high' | 'critical';

/** A tenant's gate: its mode and the settings of its signals (null turns a signal off). */
export interface ReleaseGateConfig {
  readonly mode: ReleaseGateMode;
  /** Signal `payee_standing_below_threshold`: the payee's standing score (model 1, 0–1000) under this. */
  readonly standingScoreMin: number | null;
  /** Signal `amount_over_limit`: an intent's amount above this many cents. */
  readonly amountLimitCents: number | null;
  /** Signal `first_settlement_with_payee`: no intent of this tenant was ever released to the payee. */
  readonly firstSettlement: boolean;
}

/** A tenant that never set its gate: findings recorded, nothing held; only the first-settlement signal on. */
export const releaseGateDefault: ReleaseGateConfig = { mode: 'review_only', standingScoreMin: null, amountLimitCents: null, firstSettlement: true };

/** What the gate looks at for one release. */
export interface ReleaseFacts {
  readonly amountCents: number;
  readonly currency: string;
  /** The payee's standing score with this tenant (the standing model's, history or not). */
  readonly payeeStandingScore: number;
  /** Intents of this tenant released (whole or in part) to the payee before. */
  readonly payeeReleasedCount: number;
}

export interface FraudSignalFinding {
  readonly code: FraudSignalCode;
  readonly severity: FraudSeverity;
  readonly summary: string;
}

export interface ReleaseGateDecision {
  readonly mode: ReleaseGateMode;
  readonly signals: readonly FraudSignalFinding[];
  /** Held: the mode is critical_hold and a critical signal was found. */
  readonly hold: boolean;
}

/** The signals a release meets under `config`, and whether it is held. */
export function decideReleaseGate(config: ReleaseGateConfig, facts: ReleaseFacts): ReleaseGateDecision {
  const signals: FraudSignalFinding[] = [];
  if (config.standingScoreMin !== null && facts.payeeStandingScore < config.standingScoreMin) {
    signals.push({
      code: 'payee_standing_below_threshold',
      severity: 'critical',
      summary: `The payee's standing score ${facts.payeeStandingScore} is under the tenant's threshold ${config.standingScoreMin}.`,
    });
  }
  if (config.firstSettlement && facts.payeeReleasedCount === 0) {
    signals.push({ code: 'first_settlement_with_payee', severity: 'critical', summary: 'No intent of this tenant was released to the payee before.' });
  }
  if (config.amountLimitCents !== null && facts.amountCents > config.amountLimitCents) {
    signals.push({
      code: 'amount_over_limit',
      severity: 'critical',
      summary: `The amount ${facts.amountCents} ${facts.currency} cents is over the tenant's limit of ${config.amountLimitCents}.`,
    });
  }
  return { mode: config.mode, signals, hold: config.mode === 'critical_hold' && signals.some((signal) => signal.severity === 'critical') };
}

/** The lifecycle table's transition that holds an intent instead of releasing it under `command`. */
export function holdTransitionOf(command: Extract<SettlingCommand, 'confirm' | 'sandboxEvidence'>): Transition {
  return transitionOf(command, command === 'sandboxEvidence' ? 'funded' : 'evidence_recorded', 'held');
}
