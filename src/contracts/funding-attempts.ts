// Funding attempts as `GET /harbor/funding-attempts` shows them (docs/engine.md "Funding attempts"): each 402
// challenge issued and what became of the credential that answered it. Never the credential nor the stored challenge.
import Type, { type Static } from 'typebox';
import { ListPage, Timestamp, Uuid, pageQueryProperties } from './common.ts';

export const fundingAttemptStatuses = ['challenged', 'pending', 'succeeded', 'declined'] as const;
export const FundingAttemptStatus = Type.Enum(fundingAttemptStatuses);
export type FundingAttemptStatus = Static<typeof FundingAttemptStatus>;

export const FundingAttempt = Type.Object({
  object: Type.Literal('funding_attempt'),
  tenant_id: Type.String(),
  attempt_id: Uuid,
  intent_id: Uuid,
  settlement_rail: Type.String(),
  status: FundingAttemptStatus,
  polls: Type.Integer({ minimum: 0 }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type FundingAttempt = Static<typeof FundingAttempt>;

export const FundingAttemptList = ListPage(FundingAttempt, 'Funding attempts, most recently changed first.');

export const FundingAttemptListQuery = Type.Object(
  { ...pageQueryProperties, status: Type.Optional(FundingAttemptStatus) },
  { additionalProperties: false },
);
