// Device login (RFC 8628, docs/sign-in.md#device-login). Two public routes for the device (get a code, poll for the
// token) and two for the signed-in person who approves it in the console (read a user code, decide it). The token
// route answers the RFC's OAuth error shape, `{error, error_description}` with 400, so that any RFC 8628 client
// understands it; it also carries our catalogue `code` and the `request_id` (docs/decisions.md, "Device login").
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { authenticatedBodyErrors, authenticatedErrors, ErrorEnvelope, publicBodyErrors } from '../../../contracts/common.ts';
import {
  DeviceCode,
  DeviceCodeBody,
  DeviceDecisionBody,
  DeviceLogin,
  DeviceStartBody,
  DeviceToken,
  DeviceTokenRefusal,
  UserCodeParams,
} from '../../../contracts/device-login.ts';
import { publicBaseUrlOf } from '../../../config.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import type { ErrorCode } from '../../../errors/catalogue.ts';
import {
  deviceCodeInputLengthMax,
  deviceUserCodeLookupsPerAddressPerWindowMax,
  deviceUserCodeLookupsPerWindowMax,
  deviceUserCodeLookupWindowSeconds,
} from '../../../limits.ts';
import { anyRole, principalOf } from '../../../plugins/access.ts';
import { PostgresRateLimitStore, RateLimiter, rateLimitHeaders, type RateLimitPolicy } from '../../../plugins/rate-limit.ts';
import type { DeviceLoginView } from '../../../db/device-login-repository.ts';
import {
  decideDevice,
  deviceCodeGrantType,
  formatUserCode,
  pollDeviceToken,
  readDeviceLogin,
  startDeviceLogin,
  type DeviceLoginApprover,
} from '../../../services/device-login-service.ts';

/** The console page where a person types the user code (served by the console surface). */
export const deviceVerificationPath = '/console/device';

/** Our code → the RFC 8628 / RFC 6749 error name of the token route. */
const oauthErrorNames: Partial<Record<ErrorCode, DeviceTokenRefusal['error']>> = {
  'device_login.request_invalid': 'invalid_request',
  'device_login.grant_type_unsupported': 'unsupported_grant_type',
  'device_login.device_code_invalid': 'invalid_grant',
  'device_login.authorization_pending': 'authorization_pending',
  'device_login.slow_down': 'slow_down',
  'device_login.access_denied': 'access_denied',
  'device_login.expired_token': 'expired_token',
};

function presentLogin(view: DeviceLoginView): DeviceLogin {
  return {
    object: 'device_login',
    user_code: formatUserCode(view.userCode),
    client_name: view.clientName,
    status: view.status,
    created_at: view.createdAt.toISOString(),
    expires_at: view.expiresAt.toISOString(),
    decided_at: view.decidedAt?.toISOString() ?? null,
    // A device that asked for a key by name is shown the key it asked for, before and after the decision.
    grant: view.requested ? 'api_key' : view.grant.kind,
    key_role: view.requested?.keyRole ?? (view.grant.kind === 'api_key' ? view.grant.keyRole : null),
    requested_environment: view.requested?.environment ?? null,
    requested_key_role: view.requested?.keyRole ?? null,
  };
}

/** The token request's two parameters, from a JSON or form body; a refusal names the RFC's error. */
function tokenParameters(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ServiceError('device_login.request_invalid');
  const { grant_type: grantType, device_code: deviceCode } = body as Record<string, unknown>;
  if (typeof grantType !== 'string' || typeof deviceCode !== 'string' || deviceCode === '') throw new ServiceError('device_login.request_invalid');
  if (grantType !== deviceCodeGrantType) throw new ServiceError('device_login.grant_type_unsupported');
  if (deviceCode.length > deviceCodeInputLengthMax) throw new ServiceError('device_login.device_code_invalid');
  return deviceCode;
}

/** Form bodies (`application/x-www-form-urlencoded`), as OAuth clients send them. A repeated parameter makes the
 * body null, which each route then refuses in its own shape (RFC 6749 section 3.2: no parameter twice). */
function parseForm(text: string): Record<string, string> | null {
  const form: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    if (name in form) return null;
    form[name] = value;
  }
  return form;
}

export async function deviceLoginRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const context = { database: app.database, gatewayKeys: app.gatewayKeys };
  // Encapsulated in this plugin: only the device routes take form bodies.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
    done(null, parseForm(body as string));
  });

  const deviceCodeAnswer = (request: FastifyRequest, reply: FastifyReply, started: Awaited<ReturnType<typeof startDeviceLogin>>): DeviceCode => {
    const verificationUri = `${publicBaseUrlOf(app.publicBaseUrl, request)}${deviceVerificationPath}`;
    reply.header('cache-control', 'no-store');
    return {
      device_code: started.deviceCode,
      user_code: started.userCode,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(started.userCode)}`,
      expires_in: started.expiresInSeconds,
      interval: started.intervalSeconds,
    };
  };

  routes.post(
    '/v1/public/auth/device/code',
    {
      config: { access: { public: true } },
      schema: { summary: 'Start a device login (RFC 8628)', body: DeviceCodeBody, response: { 200: DeviceCode, ...publicBodyErrors() } },
      // Every field is optional, so no body at all is an empty request (RFC clients may send none).
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => deviceCodeAnswer(request, reply, await startDeviceLogin(app.database, request.body?.client_name)),
  );

  // The public client's start: the same device flow, asking by name for an API key of an environment and a role,
  // which the approval then grants (docs/sign-in.md#a-key-the-device-asks-for).
  routes.post(
    '/v1/public/auth/device/start',
    {
      config: { access: { public: true } },
      schema: { summary: 'Start a device login that asks for an API key of an environment and a role', body: DeviceStartBody, response: { 200: DeviceCode, ...publicBodyErrors() } },
    },
    async (request, reply) => {
      const { client_name: clientName, requested_environment: environment, service_account_role: keyRole = 'operator' } = request.body;
      return deviceCodeAnswer(request, reply, await startDeviceLogin(app.database, clientName, { environment, keyRole }));
    },
  );

  // The body (JSON or form) is read by tokenParameters, so that every refusal takes the RFC's shape: no body schema.
  routes.post(
    '/v1/public/auth/device/token',
    {
      config: { access: { public: true } },
      schema: {
        summary: 'Poll for the device login\'s token (RFC 8628; refusals in the OAuth error shape)',
        response: {
          200: DeviceToken,
          ...publicBodyErrors(),
          // The RFC's refusals, and the envelope of a body that is not JSON or a form at all.
          400: Type.Union([DeviceTokenRefusal, ErrorEnvelope(400)]),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        const grant = await pollDeviceToken(context, tokenParameters(request.body));
        if (grant.kind === 'api_key') {
          // An API key does not expire, so no expires_in (RFC 6749 makes it optional).
          return {
            access_token: grant.apiKey,
            token_type: 'Bearer' as const,
            credential_type: 'api_key' as const,
            tenant_id: grant.tenantId,
            tenant_uuid: grant.tenantUuid,
            environment: grant.environment,
            key_id: grant.keyId,
            service_account_role: grant.role,
            roles: [grant.role],
          };
        }
        const { session } = grant;
        return {
          access_token: session.accessToken,
          token_type: 'Bearer' as const,
          credential_type: 'session' as const,
          expires_in: session.expiresInSeconds,
          tenant_id: session.tenantId,
          user_id: session.userId,
          roles: [...session.roles],
        };
      } catch (error) {
        const oauthError = error instanceof ServiceError ? oauthErrorNames[error.code] : undefined;
        if (oauthError === undefined) throw error;
        const slowDownInterval = (error as ServiceError).details?.interval;
        return reply.code(400).send({
          error: oauthError,
          error_description: (error as ServiceError).message,
          code: (error as ServiceError).code,
          ...(typeof slowDownInterval === 'number' ? { interval: slowDownInterval } : {}),
          request_id: request.id,
        });
      }
    },
  );

  const limitUserCodeLookups = userCodeLookupLimiter(app);
  const approverAccess = { access: { roles: anyRole } } as const;
  // Before the input is validated: an API key is refused as such, whatever it sends.
  const onRequest = async (request: FastifyRequest) => {
    approverOf(request);
  };

  routes.get(
    '/v1/auth/device/:user_code',
    {
      config: approverAccess,
      onRequest,
      schema: { summary: 'Read a device login by its user code (session only)', params: UserCodeParams, response: { 200: DeviceLogin, ...authenticatedErrors(404) } },
    },
    async (request, reply) => {
      const approver = await limitUserCodeLookups(request, reply);
      reply.header('cache-control', 'no-store');
      return presentLogin(await readDeviceLogin(app.database, approver, request.params.user_code));
    },
  );

  routes.post(
    '/v1/auth/device/approve',
    {
      config: approverAccess,
      onRequest,
      schema: {
        summary: 'Approve or deny a device login (session only)',
        body: DeviceDecisionBody,
        response: { 200: DeviceLogin, ...authenticatedBodyErrors(404, 409) },
      },
    },
    async (request, reply) => {
      const approver = await limitUserCodeLookups(request, reply);
      reply.header('cache-control', 'no-store');
      const { user_code: userCode, decision, grant, key_role: keyRole } = request.body;
      return presentLogin(await decideDevice(app.database, approver, userCode, { decision, grant, keyRole }));
    },
  );
}

/** User codes are short, so every lookup (read or decide) counts against two budgets before it is made: the
 * person's and the client address's, in the same shared counters as the gateway's rate limits. A guesser is
 * refused with 429 `rate_limit.exceeded` long before a guess is likely to hit. */
function userCodeLookupLimiter(app: FastifyInstance) {
  const limiter = new RateLimiter(new PostgresRateLimitStore(app.database.pool));
  const byPerson: RateLimitPolicy = { name: 'device-user-code', quota: deviceUserCodeLookupsPerWindowMax, windowSeconds: deviceUserCodeLookupWindowSeconds };
  const byAddress: RateLimitPolicy = { name: 'device-user-code-ip', quota: deviceUserCodeLookupsPerAddressPerWindowMax, windowSeconds: deviceUserCodeLookupWindowSeconds };
  return async (request: FastifyRequest, reply: FastifyReply): Promise<DeviceLoginApprover> => {
    const approver = approverOf(request);
    for (const [policy, subject] of [[byPerson, approver.userId], [byAddress, request.ip]] as const) {
      let decision;
      try {
        decision = await limiter.hit(policy, subject);
      } catch (error) {
        throw new ServiceError('internal.unavailable', { cause: error });
      }
      if (!decision.allowed) {
        reply.headers(rateLimitHeaders(policy, decision));
        reply.header('retry-after', String(decision.resetSeconds));
        throw new ServiceError('rate_limit.exceeded', { details: { policy: policy.name, retry_after_seconds: decision.resetSeconds } });
      }
    }
    return approver;
  };
}

/** The signed-in person behind the request; an API key has no person to issue a session for. */
function approverOf(request: FastifyRequest): DeviceLoginApprover {
  const principal = principalOf(request);
  if (principal.credential.type !== 'session') throw new ServiceError('device_login.session_required');
  return { tenantId: principal.tenantId, userId: principal.credential.userId, role: principal.role, environment: principal.environment };
}
