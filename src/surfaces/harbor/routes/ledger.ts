// Ledger routes under /harbor/ledger/v1 (docs/ledger.md#routes): the signed tip checkpoint, the
// signing authority, and the rows as a paged event stream. Read-only; every answer echoes the caller's tenant.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { LedgerAuthority, LedgerEvents, LedgerEventsQuery, LedgerTip } from '../../../contracts/ledger.ts';
import { listLedgerRows, type LedgerRow } from '../../../db/ledger-repository.ts';
import { ledgerEventsPageDefault } from '../../../limits.ts';
import { principalOf } from '../../../plugins/access.ts';
import { ledgerLine, readLedgerTip, signLedgerCheckpoint } from '../../../services/ledger-service.ts';

/** Operators and auditors read the ledger; agents, which move money, do not audit it. */
const readers = { access: { roles: ['admin', 'operator', 'auditor'] as const } };


export async function ledgerRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/ledger/v1/tip', { config: readers, schema: { summary: 'The signed ledger tip', response: { 200: LedgerTip, ...authenticatedErrors() } } }, async (request) => {
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

  app.get('/ledger/v1/authority', { config: readers, schema: { summary: 'The ledger signing authority', response: { 200: LedgerAuthority, ...authenticatedErrors() } } }, async (request) => {
    const { tenantId } = principalOf(request);
    const active = app.gatewayKeys.active;
    return {
      tenant: tenantId,
      tenant_id: tenantId,
      algorithm: 'ed25519' as const,
      public_key_hex: active.publicKeyHex,
      kid: active.kid,
      // Checkpoints signed before a rotation verify against a key that is still published here.
      verification_keys: app.gatewayKeys.verificationKeys.map((key) => ({ kid: key.kid, public_key_hex: key.publicKeyHex })),
    };
  });

  app.get(
    '/ledger/v1/events',
    { config: readers, schema: { summary: 'Ledger rows after a sequence number', querystring: LedgerEventsQuery, response: { 200: LedgerEvents, ...authenticatedErrors() } } },
    async (request) => {
      const { tenantId } = principalOf(request);
      // The query schema's defaults have filled both in.
      const { after_seq: afterSeq = 0, limit = ledgerEventsPageDefault } = request.query;
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
