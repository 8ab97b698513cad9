// The tenant key registry (DESIGN.md §2): register, list and revoke the Ed25519 public keys of the tenant's
// principals, agents (by recognition-proof key_id) and operators. Recognition proofs, live-mode intents and
// operator receipts are checked against these keys.
import { Point } from '@noble/ed25519';
import type { FastifyInstance } from 'fastify';
import {
  insertRegisteredKey,
  listRegisteredKeys,
  registeredKeyKinds,
  revokeRegisteredKey,
  type RegisteredKey,
  type RegisteredKeyKind,
} from '../../../db/registered-key-repository.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { pageSizeDefault, pageSizeMax } from '../../../limits.ts';
import { principalOf } from '../../../platform/access.ts';
import { isUniqueViolation } from '../../../platform/database.ts';

const registeredKeyIdSchema = { type: 'string', pattern: '^rkey_[0-9a-f]{32}$' } as const;
/** Agent subjects are recognition-proof key ids and follow their grammar (client-wire.md §8.1). */
const agentKeyIdPattern = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;

const registerBody = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'subject', 'public_key_ed25519_hex'],
  properties: {
    kind: { type: 'string', enum: registeredKeyKinds },
    subject: { type: 'string', minLength: 1, maxLength: 256 },
    public_key_ed25519_hex: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: registeredKeyKinds },
    subject: { type: 'string', minLength: 1, maxLength: 256 },
    limit: { type: 'integer', minimum: 1, maximum: pageSizeMax, default: pageSizeDefault },
    cursor: registeredKeyIdSchema,
  },
} as const;

function present(key: RegisteredKey) {
  return {
    object: 'registered_key',
    id: key.registeredKeyId,
    kind: key.kind,
    subject: key.subject,
    public_key_ed25519_hex: key.publicKey.toString('hex'),
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

/** A key we would ever verify against: a point on the curve and not of small order (such a key would accept
 * signatures that prove nothing). */
function isUsablePublicKey(hex: string): boolean {
  try {
    return !Point.fromHex(hex).isSmallOrder();
  } catch {
    return false;
  }
}

export async function keyRegistryRoutes(app: FastifyInstance): Promise<void> {
  const writers = { access: { roles: ['admin', 'operator'] as const } };
  const readers = { access: { roles: ['admin', 'operator', 'auditor'] as const } };

  app.post<{ Body: { kind: RegisteredKeyKind; subject: string; public_key_ed25519_hex: string } }>(
    '/v1/registry/keys',
    { config: writers, schema: { body: registerBody } },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const { kind, subject, public_key_ed25519_hex: publicKeyHex } = request.body;
      if (kind === 'agent' && !agentKeyIdPattern.test(subject)) {
        throw new ServiceError('request.invalid', {
          message: 'An agent subject is its recognition-proof key_id: lowercase, ^[a-z0-9][a-z0-9._:/-]{0,127}$.',
          details: { fields: [{ location: 'body', path: '/subject', message: 'must be a recognition-proof key_id' }] },
        });
      }
      if (!isUsablePublicKey(publicKeyHex)) throw new ServiceError('registry.public_key_invalid');
      try {
        const key = await app.database.tenant(tenantId, (tx) =>
          insertRegisteredKey(tx, tenantId, { kind, subject, publicKey: Buffer.from(publicKeyHex, 'hex') }),
        );
        return reply.code(201).send(present(key));
      } catch (error) {
        if (isUniqueViolation(error, 'registered_keys_live_key')) throw new ServiceError('registry.key_already_registered');
        if (isUniqueViolation(error, 'registered_keys_live_agent')) throw new ServiceError('registry.agent_key_id_taken');
        throw error;
      }
    },
  );

  app.get<{ Querystring: { kind?: RegisteredKeyKind; subject?: string; limit: number; cursor?: string } }>(
    '/v1/registry/keys',
    { config: readers, schema: { querystring: listQuery } },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { kind, subject, limit, cursor } = request.query;
      const page = await app.database.tenant(tenantId, (tx) => listRegisteredKeys(tx, tenantId, { kind, subject, limit, startingAfter: cursor }));
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
