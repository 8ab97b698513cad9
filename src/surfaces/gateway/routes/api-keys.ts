// Admin routes for service-account API keys: create (the key is shown once), list, read, revoke.
import type { FastifyInstance } from 'fastify';
import { roles } from '../../../credentials/roles.ts';
import { findApiKey, listApiKeys, type ApiKeyRecord } from '../../../db/api-key-repository.ts';
import { findTenant } from '../../../db/tenant-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { apiKeyNameLengthMax, apiKeyScopeLengthMax, apiKeyScopesMax, pageSizeDefault, pageSizeMax } from '../../../limits.ts';
import { adminOnly, principalOf } from '../../../plugins/access.ts';
import { issueApiKey, revokeAndAnnounce, type ApiKeyRequest } from '../../../services/api-key-service.ts';

const keyIdSchema = { type: 'string', pattern: '^key_[0-9a-f]{32}$' } as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['role'],
  properties: {
    role: { type: 'string', enum: roles },
    name: { type: 'string', maxLength: apiKeyNameLengthMax },
    scopes: {
      type: 'array',
      maxItems: apiKeyScopesMax,
      items: { type: 'string', pattern: `^[a-z0-9][a-z0-9._:-]{0,${apiKeyScopeLengthMax - 1}}$` },
    },
  },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault },
    cursor: keyIdSchema,
  },
} as const;

function present(record: ApiKeyRecord) {
  return {
    object: 'api_key',
    key_id: record.keyId,
    role: record.role,
    name: record.name,
    key_kind: record.kind,
    scopes: record.scopes,
    created_at: record.createdAt.toISOString(),
    last_used_at: record.lastUsedAt?.toISOString() ?? null,
    revoked_at: record.revokedAt?.toISOString() ?? null,
  };
}

export async function apiKeyRoutes(app: FastifyInstance): Promise<void> {
  const config = { access: { roles: adminOnly } };

  app.post<{ Body: ApiKeyRequest }>('/v1/admin/api-keys', { config, schema: { body: createBody } }, async (request, reply) => {
    const { tenantId } = principalOf(request);
    const issued = await app.database.tenant(tenantId, async (tx) => {
      const tenant = await findTenant(tx, tenantId);
      if (!tenant) throw new ServiceError('tenant.not_found');
      return issueApiKey(tx, tenant, request.body);
    });
    return reply.code(201).send({ ...present(issued.record), api_key: issued.apiKey });
  });

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/v1/admin/api-keys',
    { config, schema: { querystring: listQuery } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { limit, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listApiKeys(tx, tenantId, { limit, startingAfter: cursor }));
      return {
        object: 'list',
        data: page.keys.map(present),
        has_more: page.hasMore,
        next_cursor: page.hasMore ? (page.keys.at(-1)?.keyId ?? null) : null,
      };
    },
  );

  const byId = { params: { type: 'object', required: ['key_id'], properties: { key_id: keyIdSchema } } } as const;

  app.get<{ Params: { key_id: string } }>('/v1/admin/api-keys/:key_id', { config, schema: byId }, async (request) => {
    const { tenantId } = principalOf(request);
    const record = await app.database.tenant(tenantId, (tx) => findApiKey(tx, tenantId, request.params.key_id));
    if (!record) throw new ServiceError('api_key.not_found');
    return present(record);
  });

  // Revocation is idempotent: revoking a revoked key answers the same record with its first revocation time.
  app.delete<{ Params: { key_id: string } }>('/v1/admin/api-keys/:key_id', { config, schema: byId }, async (request) => {
    const { tenantId } = principalOf(request);
    const record = await app.database.tenant(tenantId, (tx) => revokeAndAnnounce(tx, tenantId, request.params.key_id));
    if (!record) throw new ServiceError('api_key.not_found');
    app.authenticator.forget(record.keyId);
    return present(record);
  });
}
