// Fixtures of the ledger tests: postings of the three shapes, intents inserted directly (the engine is not needed to
// test the ledger), and tampering as the superuser, who alone can get past the append-only trigger.
import { randomUUID } from 'node:crypto';
import { Database } from '../../src/infra/database.ts';
import { ledgerAccounts, type LedgerEventKind, type LedgerPosting } from '../../src/services/ledger-service.ts';
import { encodeLedgerRowBody, ledgerGenesisRowHash, ledgerRowHash, type LedgerSide } from '../../src/signing/index.ts';

export const payeeDid = 'did:key:z6MkPayee';
export const principalDid = 'did:key:z6MkPrincipal';

/** One balanced transaction of the shape the engine posts for `eventKind`: two entries, or for a split three (the
 * payee's part `releasedCents`, default a third, and the rest to the principal). */
export function posting(eventKind: LedgerEventKind, intentId: string, amountCents: number, currency = 'usd', releasedCents = Math.max(1, Math.floor(amountCents / 3))): LedgerPosting {
  const escrow = ledgerAccounts.escrow(intentId);
  if (eventKind === 'split') {
    return {
      transactionId: randomUUID(),
      intentId,
      eventKind,
      currency,
      entries: [
        { account: ledgerAccounts.payeePayable(payeeDid), side: 'debit', amountCents: releasedCents },
        { account: ledgerAccounts.payerRefund(principalDid), side: 'debit', amountCents: amountCents - releasedCents },
        { account: escrow, side: 'credit', amountCents },
      ],
    };
  }
  const shapes: Record<Exclude<LedgerEventKind, 'split'>, [debit: string, credit: string]> = {
    fund: [escrow, ledgerAccounts.railFunding('x402_usdc_base')],
    release: [ledgerAccounts.payeePayable(payeeDid), escrow],
    refund: [ledgerAccounts.payerRefund(principalDid), escrow],
  };
  const [debit, credit] = shapes[eventKind];
  return {
    transactionId: randomUUID(),
    intentId,
    eventKind,
    currency,
    entries: [
      { account: debit, side: 'debit', amountCents },
      { account: credit, side: 'credit', amountCents },
    ],
  };
}

/** An intent row with the NOT NULL columns of migrations/0004 filled (an unsigned sandbox intent). */
export async function insertIntent(
  database: Database,
  tenantId: string,
  intent: { intentId?: string; state: string; amountCents: number; currency?: string; releasedCents?: number },
): Promise<string> {
  const intentId = intent.intentId ?? randomUUID();
  // A settled intent records its parts (migrations/0029): all to one side, or for a split the part given.
  const released = { released: intent.amountCents, refunded: 0, resolved_split: intent.releasedCents }[intent.state] ?? null;
  await database.system((tx) =>
    tx.query(
      `INSERT INTO intents (tenant_id, intent_id, state, signing_version, principal_did, principal_key_registered, payee_did,
         budget, currency, amount_cents, evidence_schema, deadline_text, deadline, predicate_dsl, settlement_rail, allowed_tools,
         released_cents, refunded_cents)
       VALUES ($1, $2, $3, 0, $4, false, $5, '{}', $6, $7, '{}', '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z',
         '{"version":1,"root":{"op":"true"}}', 'x402_usdc_base', '{}', $8::bigint, $7 - $8::bigint)`,
      [tenantId, intentId, intent.state, principalDid, payeeDid, intent.currency ?? 'usd', intent.amountCents, released],
    ),
  );
  return intentId;
}

/** Runs `sql` with the user triggers of ledger_rows off, as a superuser would to rewrite history. */
export async function tamper(database: Database, sql: string, values: unknown[] = []): Promise<void> {
  const client = await database.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('ALTER TABLE ledger_rows DISABLE TRIGGER USER');
    await client.query(sql, values);
    await client.query('ALTER TABLE ledger_rows ENABLE TRIGGER USER');
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A careful forger: re-encodes every body of `tenantId` from its columns and rebuilds the whole chain and the head,
 * so bodies, hashes and head all agree again. What is left to catch is what the columns say.
 */
export async function forgeChain(database: Database, tenantId: string): Promise<void> {
  const { rows } = await database.pool.query(
    `SELECT ledger_seq, transaction_id, intent_id, entry_index, account, side, amount_cents, currency, event_kind, recorded_at
     FROM ledger_rows WHERE tenant_id = $1 ORDER BY ledger_seq`,
    [tenantId],
  );
  let prev: Buffer = Buffer.from(ledgerGenesisRowHash);
  const updates: Array<[string, Buffer, Buffer, Buffer]> = [];
  for (const row of rows) {
    const body = Buffer.from(
      encodeLedgerRowBody({
        tenant_id: tenantId,
        ledger_seq: BigInt(row.ledger_seq),
        transaction_id: row.transaction_id,
        intent_id: row.intent_id,
        entry_index: row.entry_index,
        account: row.account,
        side: row.side as LedgerSide,
        amount_cents: BigInt(row.amount_cents),
        currency: row.currency,
        event_kind: row.event_kind,
        recorded_at: (row.recorded_at as Date).toISOString(),
      }),
    );
    const rowHash = Buffer.from(ledgerRowHash(prev, body));
    updates.push([row.ledger_seq, body, prev, rowHash]);
    prev = rowHash;
  }
  const last = updates.at(-1)!;
  await tamper(
    database,
    `UPDATE ledger_rows AS r SET body = u.body, prev_row_hash = u.prev, row_hash = u.hash
     FROM unnest($2::bigint[], $3::bytea[], $4::bytea[], $5::bytea[]) AS u(seq, body, prev, hash)
     WHERE r.tenant_id = $1 AND r.ledger_seq = u.seq`,
    [tenantId, updates.map((u) => u[0]), updates.map((u) => u[1]), updates.map((u) => u[2]), updates.map((u) => u[3])],
  );
  await database.pool.query('UPDATE ledger_heads SET last_ledger_seq = $2, last_row_hash = $3 WHERE tenant_id = $1', [tenantId, last[0], last[3]]);
}
