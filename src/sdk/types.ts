// The wire objects the SDK returns, under the SDK's public names. They are not restated here: each is the type of the
// server's own response schema in src/contracts/, imported as a type only, so the SDK's JavaScript gains no code
// from it, and the server and the SDK cannot disagree on a field (docs/sdk.md#types).
import type {
  EvidenceAnswer as EvidenceAnswerContract,
  EvidenceSubmission as EvidenceSubmissionContract,
  EvidenceSubmissionList as EvidenceSubmissionListContract,
  FundAnswer,
  Intent,
  IntentList,
  IntentState,
  SettlementAnswer,
} from '../contracts/intents.ts';
import type { LedgerAuthority, LedgerCheckpoint, LedgerEvents, LedgerLine, LedgerTip } from '../contracts/ledger.ts';
import type { PolicyPreview, PolicyTestResult as PolicyTestResultContract, PolicyVersion, PolicyVersions, TemplateCatalog } from '../contracts/policies.ts';
import type { PolicyHeadMove } from '../contracts/policy-rollback.ts';
import type { Principal } from '../contracts/principal.ts';
import type { RegisteredKey, RegisteredKeyPage } from '../contracts/registry.ts';
import type { CapabilityVerdict, SpendDecision } from '../contracts/spend-decisions.ts';
import type { PredicateEvaluation, TraceStep } from '../predicate/ast.ts';

export type {
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

/** `predicate_evaluation` under the evaluator's own names (src/predicate): the contracts describe the same shape, but
 * leave open the copy stored with an evidence submission. */
type WithEvaluation<T> = Omit<T, 'predicate_evaluation'> & { readonly predicate_evaluation: PredicateEvaluation };

/** `POST /harbor/intents/{id}/evidence`. */
export type EvidenceAnswer = WithEvaluation<EvidenceAnswerContract>;
/** One evidence submission as stored (`GET /harbor/intents/{id}/evidence`). */
export type EvidenceSubmission = WithEvaluation<EvidenceSubmissionContract>;
export type EvidenceSubmissionList = Omit<EvidenceSubmissionListContract, 'data'> & { readonly data: EvidenceSubmission[] };
export type PolicyTestResult = WithEvaluation<PolicyTestResultContract>;

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
