// The tenant key registry: register, list and revoke the Ed25519 public keys of the tenant's principals, agents
// (by recognition-proof key_id) and operators. Recognition proofs, live-mode intents and operator receipts are
// checked against these keys. Sandbox agent keys registered on first use are listed and revoked here like any other.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import {
  RegisteredKey,
  RegisteredKeyCreateBody,
  RegisteredKeyListQuery,
  RegisteredKeyPage,
  RegisteredKeyParams,
} from '../../../contracts/registry.ts';
import { listRegisteredKeys, revokeRegisteredKey } from '../../../db/registered-key-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { principalOf } from '../../../plugins/access.ts';
import { presentRegisteredKey as present, registerKey } from '../../../services/key-registry-service.ts';

export async function keyRegistryRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const writers = { access: { roles: ['admin', 'operator'] as const } };
  const readers = { access: { roles: ['admin', 'operator', 'auditor'] as const } };

  routes.post(
    '/v1/registry/keys',
    {
      config: writers,
      schema: {
        summary: 'Register a public key',
        body: RegisteredKeyCreateBody,
        response: { 201: RegisteredKey, ...authenticatedBodyErrors(404, 409) },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const { kind, subject, public_key_ed25519_hex: publicKeyHex } = request.body;
      const key = await registerKey(app.database, tenantId, { kind, subject, publicKeyHex, registeredBy: 'api' });
      return reply.code(201).send(present(key));
    },
  );

  routes.get(
    '/v1/registry/keys',
    {
      config: readers,
      schema: { summary: 'List registered keys', querystring: RegisteredKeyListQuery, response: { 200: RegisteredKeyPage, ...authenticatedErrors() } },
    },
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
      } as const;
    },
  );

  routes.delete(
    '/v1/registry/keys/:id',
    {
      config: writers,
      schema: { summary: 'Revoke a registered key', params: RegisteredKeyParams, response: { 200: RegisteredKey, ...authenticatedErrors(404) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const key = await app.database.tenant(tenantId, (tx) => revokeRegisteredKey(tx, tenantId, request.params.id));
      if (!key) throw new ServiceError('registry.key_not_found');
      return present(key);
    },
  );
}
