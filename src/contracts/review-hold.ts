// What the release gate did to a release it held (docs/release-gate.md), as the answers of the commands that can meet
// it carry it (confirm, sandbox evidence), and the gate's names those answers share with the review routes
// (src/contracts/review.ts).
import Type, { type Static } from 'typebox';

export const releaseGateModes = ['review_only', 'critical_hold'] as const;
export const ReleaseGateMode = Type.Enum(releaseGateModes);
export const fraudSignalCodes = ['payee_standing_below_threshold', 'first_settlement_with_payee', 'amount_over_limit'] as const;
export const FraudSignalCode = Type.Enum(fraudSignalCodes);
export const Severity = Type.Enum(['elevated', 'high', 'critical'] as const);

/** What the release gate did to a release: in an answer that held the intent (confirm, sandbox evidence). */
export const ReviewHoldFacts = Type.Object(
  {
    held: Type.Literal(true),
    gate_mode: ReleaseGateMode,
    signals: Type.Array(Type.Object({ code: FraudSignalCode, severity: Severity, summary: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false, description: 'The release gate held the release for review (docs/release-gate.md).' },
);

export type ReviewHoldFacts = Static<typeof ReviewHoldFacts>;
