// POST /harbor/intents/{id}/fund: the 402 funding handshake (docs/rails.md). Answers 200 (funded, with the
// capability token), 202 (pending: re-send the same request to poll) or 402 (a challenge to answer).
import type { FastifyInstance } from 'fastify';
import { fundIntent } from '../../../engine/fund.ts';
import { lifecycle } from '../../../engine/lifecycle.ts';
import { engineMutation } from '../engine-mutation.ts';
import { intentIdParams } from './intents.ts';

export async function fundRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { intent_id: string } }>(
    '/intents/:intent_id/fund',
    // The body is `{}` (or nothing): the rail credential travels in headers.
    { config: { access: { roles: lifecycle.fund.roles, scope: 'mcp.settlement:write' } }, schema: { params: intentIdParams } },
    async (request, reply) =>
      engineMutation(app, request, reply, 'fund', (tx, principal) =>
        fundIntent(tx, {
          principal,
          intentId: request.params.intent_id,
          headers: request.headers,
          resourceUrl: `${request.protocol}://${request.host}${request.url.split('?')[0]}`,
          keyring: app.gatewayKeys,
        }),
      ),
  );
}
