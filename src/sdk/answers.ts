// Every answer the SDK hands back is checked against its route's contract, the TypeBox schema the server answers by
// (src/contracts/), before it is typed as that contract: an answer the contract does not allow is a SvcContractError,
// never an object cast to a type it does not have. Members a contract does not list pass (a newer server may add
// fields); a member missing, of another type, or a value outside its enum does not (docs/sdk.md#types).
import Type, { type Static } from 'typebox';
import { Check, Errors } from 'typebox/value';
import {
  EvidenceAnswer,
  EvidenceSubmission as EvidenceSubmissionContract,
  EvidenceSubmissionList,
  FundAnswer,
  Intent,
  IntentList,
  PredicateEvaluation as PredicateEvaluationContract,
  PredicateTraceStep,
  SettlementAnswer,
} from '../contracts/intents.ts';
import { Event, EventPage } from '../contracts/events.ts';
import { LedgerAuthority, LedgerEvents, LedgerTip } from '../contracts/ledger.ts';
import { PolicyPreview, PolicyTestResult, PolicyVersion, PolicyVersions, TemplateCatalog } from '../contracts/policies.ts';
import { PolicyHeadMove } from '../contracts/policy-rollback.ts';
import { Principal } from '../contracts/principal.ts';
import { RegisteredKey, RegisteredKeyPage } from '../contracts/registry.ts';
import { FraudMetrics, OperatorReviewStatus, ReleaseGateAnswer, ResolveAnswer, ReviewEventAnswer, ReviewQueue } from '../contracts/review.ts';
import { CapabilityVerdict, SpendDecision } from '../contracts/spend-decisions.ts';
import { SvcContractError, type ContractProblem } from './errors.ts';
import type { TransportResponse } from './transport.ts';

/** One step of an evaluation trace: the contract's, with `data.passed` required, as the contract says in words (it
 * lists the member as optional only to keep the order the evaluator writes members in). */
const TraceStep = Type.Object({
  ...PredicateTraceStep.properties,
  data: Type.Object({ ...PredicateTraceStep.properties.data.properties, passed: Type.Boolean() }),
});
const PredicateEvaluation = Type.Object({ ...PredicateEvaluationContract.properties, trace: Type.Array(TraceStep) });

// The contracts that carry a `predicate_evaluation`, checked as the evaluation it is. The stored copy of an evidence
// submission is left undescribed by its contract, which only fixes how the server serializes it: it is what the
// evidence answer carried, so the SDK checks it as that.
const EvidenceAnswerChecked = Type.Object({ ...EvidenceAnswer.properties, predicate_evaluation: PredicateEvaluation });
const EvidenceSubmissionChecked = Type.Object({ ...EvidenceSubmissionContract.properties, predicate_evaluation: PredicateEvaluation });
const PolicyTestResultChecked = Type.Object({ ...PolicyTestResult.properties, predicate_evaluation: PredicateEvaluation });

/** Every contract the SDK checks an answer against, by the name its errors give. */
export const answerContracts = {
  Principal,
  Intent,
  IntentList,
  FundAnswer,
  EvidenceAnswer: EvidenceAnswerChecked,
  EvidenceSubmissionList: Type.Object({ ...EvidenceSubmissionList.properties, data: Type.Array(EvidenceSubmissionChecked) }),
  SettlementAnswer,
  CapabilityVerdict,
  SpendDecision,
  TemplateCatalog,
  PolicyPreview,
  PolicyTestResult: PolicyTestResultChecked,
  PolicyVersion,
  PolicyVersions,
  PolicyHeadMove,
  LedgerTip,
  LedgerAuthority,
  LedgerEvents,
  RegisteredKey,
  RegisteredKeyPage,
  Event,
  EventPage,
  ReleaseGateAnswer,
  ReviewQueue,
  ReviewEventAnswer,
  OperatorReviewStatus,
  FraudMetrics,
  ResolveAnswer,
};

export type AnswerName = keyof typeof answerContracts;
/** The type of an answer that passed its contract's check. */
export type Answer<Name extends AnswerName> = Static<(typeof answerContracts)[Name]>;
export type TraceStep = Static<typeof TraceStep>;
export type PredicateEvaluation = Static<typeof PredicateEvaluation>;
export type EvidenceSubmission = Static<typeof EvidenceSubmissionChecked>;

/** How many of an answer's problems an error lists: enough to see the drift, bounded for a large answer. */
const contractProblemsListedMax = 8;

/** A webhook delivery's body as the event it must be (no HTTP response to name: the receiver got it). */
export function checkedEvent(body: unknown): Answer<'Event'> {
  if (Check(Event, body)) return body;
  const problems: ContractProblem[] = Errors(Event, body)
    .slice(0, contractProblemsListedMax)
    .map((error) => ({ path: error.instancePath === '' ? '/' : error.instancePath, message: error.message }));
  throw new SvcContractError('Event', problems, 'webhook delivery', 200, JSON.stringify(body));
}

/** `body` as the answer the contract `name` describes, or `SvcContractError` saying where it differs. */
export function checkedAnswer<Name extends AnswerName>(name: Name, body: unknown, response: TransportResponse): Answer<Name> {
  const contract: (typeof answerContracts)[Name] = answerContracts[name];
  if (Check(contract, body)) return body;
  const problems: ContractProblem[] = Errors(contract, body)
    .slice(0, contractProblemsListedMax)
    .map((error) => ({ path: error.instancePath === '' ? '/' : error.instancePath, message: error.message }));
  throw new SvcContractError(name, problems, response.url, response.status, response.bodyText);
}
