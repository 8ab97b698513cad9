// The wire objects the SDK returns, under the SDK's public names. They are not restated here: each is the type of the
// server's own response schema in src/contracts/, which the SDK checks every answer against (./answers.ts), so the
// server and the SDK cannot disagree on a field unnoticed (docs/sdk.md#types).
import type { Answer, EvidenceSubmission, PredicateEvaluation, TraceStep } from './answers.ts';
import type {
  FundAnswer,
  Intent,
  IntentList,
  IntentState,
  SettlementAnswer,
} from '../contracts/intents.ts';
import type { LedgerAuthority, LedgerCheckpoint, LedgerEvents, LedgerLine, LedgerTip } from '../contracts/ledger.ts';
import type { PolicyPreview, PolicyVersion, PolicyVersions, TemplateCatalog } from '../contracts/policies.ts';
import type { PolicyHeadMove } from '../contracts/policy-rollback.ts';
import type { Principal } from '../contracts/principal.ts';
import type { RegisteredKey, RegisteredKeyPage } from '../contracts/registry.ts';
import type { CapabilityVerdict, SpendDecision } from '../contracts/spend-decisions.ts';
import type { FraudMetrics, OperatorReviewStatus, ReleaseGateAnswer, ResolveAnswer, ReviewEventAnswer, ReviewQueue } from '../contracts/review.ts';

export type {
  EvidenceSubmission,
  FraudMetrics,
  OperatorReviewStatus,
  ResolveAnswer,
  ReviewEventAnswer,
  ReviewQueue,
  FundAnswer,
  Intent,
  IntentList,
  IntentState,
  LedgerAuthority,
  LedgerCheckpoint,
  LedgerTip,
  PolicyPreview,
  PolicyVersion,
  PredicateEvaluation,
  Principal,
  RegisteredKey,
  SettlementAnswer,
  SpendDecision,
  TraceStep,
};

/** Any JSON object the caller writes (evidence, a rule, template parameters). */
export type JsonObject = { [key: string]: unknown };

/** A rail id as an intent names it (`x402_usdc_base`, `processor_mpp`). */
export type SettlementRail = Intent['settlement_rail'];

/** `funding` of a fund answer (docs/rails.md): `settlement_rail` and `status`, then the rail's own members, which the
 * contract leaves open. */
export type FundingDetails = FundAnswer['funding'] & { readonly [field: string]: unknown };

/** `POST /harbor/intents/{id}/evidence`; its `predicate_evaluation`, like every other, is a `PredicateEvaluation`
 * whose trace steps each say whether they passed. */
export type EvidenceAnswer = Answer<'EvidenceAnswer'>;
/** The evidence submitted for an intent (`GET /harbor/intents/{id}/evidence`), each `EvidenceSubmission` as stored. */
export type EvidenceSubmissionList = Answer<'EvidenceSubmissionList'>;
export type PolicyTestResult = Answer<'PolicyTestResult'>;

/** `POST /verify` (docs/capabilities.md#post-verify): 200 for allow and deny alike. */
export type VerifyResult = CapabilityVerdict;
/** One managed template of `GET /harbor/policy/v1/templates`. */
export type PolicyTemplate = TemplateCatalog['templates'][number];
export type PolicyVersionList = PolicyVersions;
/** `POST /harbor/policy/v1/rollout`: where the template's head moved. */
export type PolicyRollout = PolicyHeadMove;

/** One ledger row of `GET /harbor/ledger/v1/events` (the server's `LedgerLine`, also a line of an audit bundle). */
export type LedgerEvent = LedgerLine;
export type LedgerEventsPage = LedgerEvents;

/** `GET /v1/registry/keys`. */
export type RegisteredKeyList = RegisteredKeyPage;

/** `GET|PUT /signal/v1/fraud/release-gate` (docs/release-gate.md). */
export type ReleaseGate = ReleaseGateAnswer;
