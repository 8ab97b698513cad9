// GET /.well-known/jwks.json: the gateway's public keys (active and retired-but-published), for verifying the
// session, download and capability JWTs it signs.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { publicErrors } from '../../../contracts/common.ts';
import { GatewayJwks } from '../../../contracts/well-known.ts';

/** Verifiers may cache the set briefly: a rotation across replicas stages the new key (published, not signing)
 * for longer than this before it becomes active. */
const jwksCacheSeconds = 300;

export async function jwksRoutes(app: FastifyInstance): Promise<void> {
  const body = app.gatewayKeys.jwks();
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/.well-known/jwks.json',
    {
      config: { access: { public: true } },
      schema: { summary: 'The gateway\'s public keys (JWKS)', response: { 200: GatewayJwks, ...publicErrors() } },
    },
    async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${jwksCacheSeconds}`);
      return body;
    },
  );
}
