// POST /harbor/intents/{id}/fund: the 402 funding handshake (docs/rails.md). Answers 200 (funded, with the
// capability token), 202 (pending: re-send the same request to poll) or 402 (a challenge to answer).
import Type from 'typebox';
import { authenticatedErrors, IdempotencyHeaders } from '../../../contracts/common.ts';
import { FundAnswer, fundAnswerContracts, IntentIdParams, IntentStateConflict, type FundAnswerHeader } from '../../../contracts/intents.ts';
import { fundIntent } from '../../../engine/fund.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { idempotencyKeyOf } from '../../../plugins/idempotency.ts';
import { registeredRails } from '../../../rails/index.ts';
import { engineMutation, type EngineRouteDefinition } from '../engine-mutation.ts';

/** Each registered rail's credential headers, as the route documents them (read when the app is built). */
const railCredentialHeaders = () =>
  Object.fromEntries(registeredRails().flatMap((rail) => rail.credentialHeaders.map((header) => [header.name, Type.Optional(Type.String({ description: header.description }))])));

/** Each registered rail's headers of one kind, as an answer carries them. */
const railAnswerHeaders = (kind: 'challengeHeaders' | 'receiptHeaders'): FundAnswerHeader[] =>
  registeredRails().flatMap((rail) => rail[kind].map((header) => ({ ...header, name: header.name.toLowerCase() })));

/** The `fund` command's route (src/surfaces/harbor/engine-routes.ts registers it as the lifecycle table says). Its
 * contract is built when the app is, from the rails registered then. */
export const fundRoute: EngineRouteDefinition = (app, route) => {
  const answers = fundAnswerContracts({ challenge: railAnswerHeaders('challengeHeaders'), receipt: railAnswerHeaders('receiptHeaders') });
  return route(
    {
      // The body is `{}` (or nothing, whatever its content type says): the rail credential travels in headers.
      bodyOptional: true,
      schema: {
        summary: 'Fund an intent through its rail\'s 402 handshake',
        params: IntentIdParams,
        headers: Type.Object({ ...IdempotencyHeaders.properties, ...railCredentialHeaders() }),
        response: {
          200: answers.funded,
          202: answers.pending,
          402: answers.challenge,
          ...authenticatedErrors(404, 409, 422),
          409: IntentStateConflict,
        },
      },
      handler: async (request, reply) =>
        engineMutation<FundAnswer>(app, request, reply, (tx, principal) =>
          fundIntent(tx, {
            principal,
            intentId: request.params.intent_id,
            headers: request.headers,
            resourceUrl: `${request.protocol}://${request.host}${request.url.split('?')[0]}`,
            keyring: app.gatewayKeys,
            railRuntime: app.railRuntime,
            idempotencyKey: idempotencyKeyOf(request),
          }),
        ).catch((error: unknown) => {
          // A rail that could not be reached: the client retries the same request after Retry-After.
          if (error instanceof ServiceError && error.code === 'rail.unavailable') reply.header('retry-after', String(error.details?.['retry_after_seconds'] ?? 5));
          throw error;
        }),
    },
  );
};
