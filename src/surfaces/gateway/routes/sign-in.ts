// Sign-in with a one-time code (docs/sign-in.md). Both routes are public: login/start always answers
// 200 with a challenge (no account enumeration); challenges/verify trades the code for a 15-minute session JWT.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { publicBodyErrors } from '../../../contracts/common.ts';
import { SessionGrant, SignInChallenge, SignInStartBody, SignInVerifyBody } from '../../../contracts/sign-in.ts';
import { startSignIn, verifySignIn } from '../../../services/sign-in-service.ts';

export async function signInRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const context = { database: app.database, gatewayKeys: app.gatewayKeys, mail: app.mail };
  const config = { access: { public: true } } as const;

  routes.post(
    '/v1/public/auth/login/start',
    {
      config,
      schema: { summary: 'Send a one-time sign-in code by email', body: SignInStartBody, response: { 200: SignInChallenge, ...publicBodyErrors() } },
    },
    async (request, reply) => {
      const started = await startSignIn(context, request.body.email);
      reply.header('cache-control', 'no-store');
      return { challenge_id: started.challengeId, expires_at: started.expiresAt.toISOString() };
    },
  );

  routes.post(
    '/v1/public/auth/challenges/verify',
    {
      config,
      schema: {
        summary: 'Trade a one-time code for a session token',
        body: SignInVerifyBody,
        response: { 200: SessionGrant, ...publicBodyErrors(401, 409) },
      },
    },
    async (request, reply) => {
      const { challenge_id: challengeId, code, tenant_id: tenantId } = request.body;
      const grant = await verifySignIn(context, { challengeId, code, tenantId });
      // A token answer is never cached (RFC 6749 §5.1).
      reply.header('cache-control', 'no-store');
      return {
        access_token: grant.accessToken,
        token_type: 'Bearer' as const,
        expires_in: grant.expiresInSeconds,
        tenant_id: grant.tenantId,
        user_id: grant.userId,
        roles: [...grant.roles],
      };
    },
  );
}
