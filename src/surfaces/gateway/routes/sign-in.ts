// Sign-in with a one-time code (docs/sign-in.md). Both routes are public: login/start always answers
// 200 with a challenge (no account enumeration); challenges/verify trades the code for a 15-minute session JWT.
import type { FastifyInstance } from 'fastify';
import { emailLengthMax, signInCodeDigits, tenantIdLengthMax, tenantIdPattern } from '../../../limits.ts';
import { startSignIn, verifySignIn } from '../../../services/sign-in-service.ts';
import { emailLengthMin, emailPatternSource } from '../../../services/user-service.ts';

const startBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: {
    email: { type: 'string', minLength: emailLengthMin, maxLength: emailLengthMax, pattern: emailPatternSource },
  },
} as const;

const verifyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['challenge_id', 'code'],
  properties: {
    challenge_id: { type: 'string', pattern: '^lch_[0-9a-f]{32}$' },
    code: { type: 'string', pattern: `^[0-9]{${signInCodeDigits}}$` },
    tenant_id: { type: 'string', minLength: 1, maxLength: tenantIdLengthMax, pattern: tenantIdPattern.source },
  },
} as const;

export async function signInRoutes(app: FastifyInstance): Promise<void> {
  const context = { database: app.database, gatewayKeys: app.gatewayKeys, mail: app.mail };
  const config = { access: { public: true } } as const;

  app.post<{ Body: { email: string } }>('/v1/public/auth/login/start', { config, schema: { body: startBody } }, async (request, reply) => {
    const started = await startSignIn(context, request.body.email);
    reply.header('cache-control', 'no-store');
    return { challenge_id: started.challengeId, expires_at: started.expiresAt.toISOString() };
  });

  app.post<{ Body: { challenge_id: string; code: string; tenant_id?: string } }>(
    '/v1/public/auth/challenges/verify',
    { config, schema: { body: verifyBody } },
    async (request, reply) => {
      const { challenge_id: challengeId, code, tenant_id: tenantId } = request.body;
      const grant = await verifySignIn(context, { challengeId, code, tenantId });
      // A token answer is never cached (RFC 6749 §5.1).
      reply.header('cache-control', 'no-store');
      return {
        access_token: grant.accessToken,
        token_type: 'Bearer',
        expires_in: grant.expiresInSeconds,
        tenant_id: grant.tenantId,
        user_id: grant.userId,
        roles: grant.roles,
      };
    },
  );
}
