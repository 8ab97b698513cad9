// Admin routes for service-account API keys: create (the key is shown once), list, read, rotate (the new key is
// shown once), revoke.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ApiKeyCreateBody, ApiKeyCreated, ApiKeyListQuery, ApiKeyPage, ApiKeyParams, ApiKey } from '../../../contracts/api-keys.ts';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import { findApiKey, listApiKeys } from '../../../db/api-key-repository.ts';
import { findTenant } from '../../../db/tenant-repository.ts';
import { ApiKeyRotateBody, ApiKeyRotated } from '../../../contracts/api-keys.ts';
import { apiKeyRotationOverlapSecondsDefault } from '../../../limits.ts';
import { rotateAndAnnounce } from '../../../services/api-key-rotation-service.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import { apiKeyRequestOf, issueApiKey, presentApiKey, revokeAndAnnounce } from '../../../services/api-key-service.ts';

export async function apiKeyRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const config = { access: { roles: adminOnly } };

  routes.post(
    '/v1/admin/api-keys',
    {
      config,
      schema: {
        summary: 'Create an API key (the key is answered once)',
        body: ApiKeyCreateBody,
        response: { 201: ApiKeyCreated, ...authenticatedBodyErrors(404) },
      },
    },
    async (request, reply) => {
      const { tenantId, environment } = principalOf(request);
      const asked = apiKeyRequestOf(request.body);
      const issued = await app.database.tenant(tenantId, async (tx) => {
        const tenant = await findTenant(tx, tenantId);
        if (!tenant) throw new ServiceError('tenant.not_found');
        return issueApiKey(tx, tenant, asked);
      });
      const key = presentApiKey(issued.record, environment);
      return reply.code(201).send({ ...key, api_key: issued.apiKey, item: key });
    },
  );

  routes.get(
    '/v1/admin/api-keys',
    { config, schema: { summary: 'List API keys', querystring: ApiKeyListQuery, response: { 200: ApiKeyPage, ...authenticatedErrors() } } },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      const { limit, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listApiKeys(tx, tenantId, { limit, startingAfter: cursor }));
      const keys = page.keys.map((record) => presentApiKey(record, environment));
      return {
        object: 'list',
        data: keys,
        items: keys,
        has_more: page.hasMore,
        next_cursor: page.hasMore ? (page.keys.at(-1)?.keyId ?? null) : null,
      } as const;
    },
  );

  routes.get(
    '/v1/admin/api-keys/:key_id',
    { config, schema: { summary: 'Read an API key', params: ApiKeyParams, response: { 200: ApiKey, ...authenticatedErrors(404) } } },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      const record = await app.database.tenant(tenantId, (tx) => findApiKey(tx, tenantId, request.params.key_id));
      if (!record) throw new ServiceError('api_key.not_found');
      return presentApiKey(record, environment);
    },
  );

  // Revocation is idempotent: revoking a revoked key answers the same record with its first revocation time.
  routes.delete(
    '/v1/admin/api-keys/:key_id',
    { config, schema: { summary: 'Revoke an API key', params: ApiKeyParams, response: { 200: ApiKey, ...authenticatedErrors(404) } } },
    async (request) => {
      const { tenantId, environment } = principalOf(request);
      const record = await app.database.tenant(tenantId, (tx) => revokeAndAnnounce(tx, { tenantId, environment }, request.params.key_id));
      if (!record) throw new ServiceError('api_key.not_found');
      app.authenticator.forget(record.keyId);
      return presentApiKey(record, environment);
    },
  );

  // Not idempotent: each rotation mints another secret (and ends the overlap of the one before). The new key is in
  // this answer only; no idempotency record may hold it.
  routes.post(
    '/v1/admin/api-keys/:key_id/rotate',
    {
      config: { ...config, bodyOptional: true },
      schema: {
        summary: 'Rotate an API key: a new secret under the same key id (answered once); the old one works for an overlap',
        params: ApiKeyParams,
        body: ApiKeyRotateBody,
        response: { 200: ApiKeyRotated, ...authenticatedBodyErrors(404, 409) },
      },
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const overlapSeconds = request.body.previous_secret_expires_in_seconds ?? apiKeyRotationOverlapSecondsDefault;
      const rotated = await app.database.tenant(tenantId, async (tx) => {
        const tenant = await findTenant(tx, tenantId);
        if (!tenant) throw new ServiceError('tenant.not_found');
        return rotateAndAnnounce(tx, tenant, request.params.key_id, overlapSeconds);
      });
      // This process forgets at once; the others when the NOTIFY reaches them (within apiKeyCacheTtlMs at worst).
      app.authenticator.forget(rotated.record.keyId);
      reply.header('cache-control', 'no-store');
      return {
        object: 'api_key_rotation',
        key_id: rotated.record.keyId,
        api_key: rotated.apiKey,
        rotated_at: rotated.rotatedAt.toISOString(),
        previous_secret_expires_at: rotated.previousSecretExpiresAt.toISOString(),
        item: presentApiKey(rotated.record, principalOf(request).environment),
      } as const;
    },
  );
}
