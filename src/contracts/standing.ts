// Standing (docs/standing.md): the signed operator receipt (`GET /reputation/{operator_did}`) and the signed portfolio
// export (`GET /signal/v1/portfolio/signed-export`). Both answer a signed artifact exactly as signed, whose members
// are those of its kind and schema_version (docs/signing.md); the contract keeps them open rather than restate that
// layout, and `svc receipt verify` checks them.
import Type, { type Static } from 'typebox';
import { didLengthMax } from '../limits.ts';
import { OpenObject } from './common.ts';

export const OperatorDidParams = Type.Object({ operator_did: Type.String({ minLength: 1, maxLength: didLengthMax }) });
export type OperatorDidParams = Static<typeof OperatorDidParams>;

/** Any text: an unknown version is answered with its own code (standing.score_version_unsupported), not as a schema
 * mismatch; the request target's length limit bounds it. */
export const ScoreVersionQuery = Type.Object({ score_version: Type.Optional(Type.String()) });
export type ScoreVersionQuery = Static<typeof ScoreVersionQuery>;

export const SignedOperatorReceipt = OpenObject('A signed operator receipt artifact (docs/standing.md), answered as signed.');
export const SignedPortfolioSnapshot = OpenObject('A signed portfolio snapshot artifact (docs/standing.md), answered as signed.');
