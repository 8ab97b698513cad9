// Standing (docs/standing.md): the signed operator receipt (`GET /reputation/{operator_did}`) and the signed portfolio
// export (`GET /signal/v1/portfolio/signed-export`). Both answer a signed artifact exactly as signed, whose members
// are those of its kind and schema_version (docs/signing.md); the contract keeps them open rather than restate that
// layout, and `svc receipt verify` checks them.
import Type, { type Static } from 'typebox';
import { didLengthMax } from '../limits.ts';
import { AnyObject, OpenObject } from './common.ts';

export const OperatorDidParams = Type.Object({ operator_did: Type.String({ minLength: 1, maxLength: didLengthMax }) });
export type OperatorDidParams = Static<typeof OperatorDidParams>;

/** Any text: an unknown version is answered with its own code (standing.score_version_unsupported), not as a schema
 * mismatch; the request target's length limit bounds it. */
export const ScoreVersionQuery = Type.Object({ score_version: Type.Optional(Type.String()) });
export type ScoreVersionQuery = Static<typeof ScoreVersionQuery>;

export const SignedOperatorReceipt = OpenObject('A signed operator receipt artifact (docs/standing.md), answered as signed.');
export const SignedPortfolioSnapshot = OpenObject('A signed portfolio snapshot artifact (docs/standing.md), answered as signed.');

/** Per currency: the settled intents and their amounts, as exact decimal strings (a sum is not bounded by 2^53). */
const CurrencyVolume = Type.Object(
  { currency: Type.String(), terminal_intents: Type.Integer({ minimum: 0 }), receipted_volume_cents: Type.String({ pattern: '^[0-9]+$' }) },
  { additionalProperties: false },
);

/** `GET /signal/v1/portfolio/summary`: the tenant's standing aggregated over its operators, unsigned. */
export const PortfolioSummary = Type.Object(
  {
    schema_version: Type.Literal(1),
    object: Type.Literal('portfolio_summary'),
    tenant_id: Type.String(),
    issued_at: Type.String({ format: 'date-time' }),
    score_model_version: Type.String(),
    scoring_model: Type.String(),
    checkpoint_last_ledger_seq: Type.Integer({ minimum: 0 }),
    operator_count: Type.Integer({ minimum: 0 }),
    /** The mean of the operators' scores to two decimals; null without operators. */
    average_score: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
    total_terminal_intents: Type.Integer({ minimum: 0 }),
    /** Every settled intent's amount in minor units, all currencies added; null past 2^53 − 1 (volume_by_currency
     * stays exact). */
    total_receipted_volume_cents: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    volume_by_currency: Type.Array(CurrencyVolume),
    /** Operators with a review hold waiting for a resolution (docs/release-gate.md). */
    operators_under_review: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type PortfolioSummary = Static<typeof PortfolioSummary>;

const ScoreFactor = Type.Object(
  {
    factor: Type.String(),
    count: Type.Integer({ minimum: 0 }),
    /** How much one counts in the formula (an expiry counts twice a failed predicate). */
    weight: Type.Integer({ minimum: 0 }),
    effect: Type.Union([Type.Literal('raises'), Type.Literal('lowers')]),
    description: Type.String(),
  },
  { additionalProperties: false },
);

/** `GET /signal/v1/operators/{operator_did}/explanation`: why an operator has its score, unsigned; the signed receipt
 * of the same numbers is `GET /reputation/{operator_did}`. */
export const OperatorExplanation = Type.Object(
  {
    schema_version: Type.Literal(1),
    object: Type.Literal('operator_explanation'),
    tenant_id: Type.String(),
    operator_did: Type.String(),
    issued_at: Type.String({ format: 'date-time' }),
    checkpoint_last_ledger_seq: Type.Integer({ minimum: 0 }),
    score_version: Type.String(),
    scoring_model: Type.String(),
    score: Type.Integer({ minimum: 0 }),
    score_max: Type.Integer({ minimum: 1 }),
    formula: Type.String(),
    factors: Type.Array(ScoreFactor),
    summary: Type.String(),
    /** The operator's metrics, as in its receipt (docs/standing.md#metrics). */
    metrics: AnyObject('The operator\'s metrics, as in its signed receipt.'),
    /** Whether a review hold of the operator waits for a resolution (docs/release-gate.md). */
    under_review: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type OperatorExplanation = Static<typeof OperatorExplanation>;
