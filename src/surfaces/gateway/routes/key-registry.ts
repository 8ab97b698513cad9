// The tenant key registry: register, list and revoke the Ed25519 public keys of the tenant's principals, agents
// (by recognition-proof key_id) and operators. Recognition proofs, live-mode intents and operator receipts are
// checked against these keys. Sandbox agent keys registered on first use are listed and revoked here like any other.
import type { FastifyInstance } from 'fastify';
import {
  keyRegistrationSources,
  listRegisteredKeys,
  registeredKeyKinds,
  revokeRegisteredKey,
  type KeyRegistrationSource,
  type RegisteredKeyKind,
} from '../../../db/registered-key-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault, pageSizeMax, registeredKeySubjectLengthMax } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { presentRegisteredKey as present, registerKey } from '../../../services/key-registry-service.ts';

const registeredKeyIdSchema = { type: 'string', pattern: '^rkey_[0-9a-f]{32}$' } as const;

const registerBody = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'subject', 'public_key_ed25519_hex'],
  properties: {
    kind: { type: 'string', enum: registeredKeyKinds },
    subject: { type: 'string', minLength: 1, maxLength: registeredKeySubjectLengthMax },
    public_key_ed25519_hex: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: registeredKeyKinds },
    subject: { type: 'string', minLength: 1, maxLength: registeredKeySubjectLengthMax },
    registered_by: { type: 'string', enum: keyRegistrationSources },
    limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault },
    cursor: registeredKeyIdSchema,
  },
} as const;

export async function keyRegistryRoutes(app: FastifyInstance): Promise<void> {
  const writers = { access: { roles: ['admin', 'operator'] as const } };
  const readers = { access: { roles: ['admin', 'operator', 'auditor'] as const } };

  app.post<{ Body: { kind: RegisteredKeyKind; subject: string; public_key_ed25519_hex: string } }>(
    '/v1/registry/keys',
    { config: writers, schema: { body: registerBody } },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const { kind, subject, public_key_ed25519_hex: publicKeyHex } = request.body;
      const key = await registerKey(app.database, tenantId, { kind, subject, publicKeyHex, registeredBy: 'api' });
      return reply.code(201).send(present(key));
    },
  );

  app.get<{ Querystring: { kind?: RegisteredKeyKind; subject?: string; registered_by?: KeyRegistrationSource; limit: number; cursor?: string } }>(
    '/v1/registry/keys',
    { config: readers, schema: { querystring: listQuery } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { kind, subject, registered_by: registeredBy, limit, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) =>
        listRegisteredKeys(tx, tenantId, { kind, subject, registeredBy, limit, startingAfter: cursor }),
      );
      return {
        object: 'list',
        data: page.keys.map(present),
        has_more: page.hasMore,
        next_cursor: page.hasMore ? (page.keys.at(-1)?.registeredKeyId ?? null) : null,
      };
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/registry/keys/:id',
    { config: writers, schema: { params: { type: 'object', required: ['id'], properties: { id: registeredKeyIdSchema } } } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const key = await app.database.tenant(tenantId, (tx) => revokeRegisteredKey(tx, tenantId, request.params.id));
      if (!key) throw new ServiceError('registry.key_not_found');
      return present(key);
    },
  );
}
