// Ledger routes under /harbor/ledger/v1 (docs/ledger.md#routes): the signed tip checkpoint, the
// signing authority, and the rows as a paged event stream. Read-only; every answer echoes the caller's tenant.
import type { FastifyInstance } from 'fastify';
import { listLedgerRows, type LedgerRow } from '../../../db/ledger-repository.ts';
import { ledgerEventsPageDefault, ledgerEventsPageMax } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { ledgerLine, readLedgerTip, signLedgerCheckpoint } from '../../../services/ledger-service.ts';

/** Operators and auditors read the ledger; agents, which move money, do not audit it. */
const readers = { access: { roles: ['admin', 'operator', 'auditor'] as const } };


export async function ledgerRoutes(app: FastifyInstance): Promise<void> {
  app.get('/ledger/v1/tip', { config: readers }, async (request) => {
    const { tenantId } = principalOf(request);
    const tip = await app.database.tenant(tenantId, (tx) => readLedgerTip(tx, tenantId));
    return {
      tenant: tenantId,
      tenant_id: tenantId,
      ledger_seq: tip.ledgerSeq,
      row_hash_hex: tip.rowHash.toString('hex'),
      checkpoint: signLedgerCheckpoint(tenantId, tip, app.gatewayKeys.active),
    };
  });

  app.get('/ledger/v1/authority', { config: readers }, async (request) => {
    const { tenantId } = principalOf(request);
    const active = app.gatewayKeys.active;
    return {
      tenant: tenantId,
      tenant_id: tenantId,
      algorithm: 'ed25519',
      public_key_hex: active.publicKeyHex,
      kid: active.kid,
      // Checkpoints signed before a rotation verify against a key that is still published here.
      verification_keys: app.gatewayKeys.verificationKeys.map((key) => ({ kid: key.kid, public_key_hex: key.publicKeyHex })),
    };
  });

  app.get<{ Querystring: { after_seq: number; limit: number } }>(
    '/ledger/v1/events',
    {
      config: readers,
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            after_seq: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
            limit: { type: 'integer', minimum: 1, maximum: ledgerEventsPageMax, default: ledgerEventsPageDefault },
          },
        },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { after_seq: afterSeq, limit } = request.query;
      // One row past the page says whether another page follows.
      const rows = await app.database.tenant(tenantId, (tx) => listLedgerRows(tx, tenantId, afterSeq, limit + 1));
      const page = rows.slice(0, limit);
      return {
        tenant: tenantId,
        tenant_id: tenantId,
        events: page.map(ledgerLine),
        next_after_seq: rows.length > limit ? page.at(-1)!.ledgerSeq : null,
      };
    },
  );
}
