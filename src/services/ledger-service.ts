// The double-entry ledger (docs/ledger.md): the tip and the signed tip checkpoint auditors pin, and the ledger lines
// the routes and exports show. Account names, transaction shapes and posting are the engine's
// (src/engine/ledger-posting.ts), re-exported here for the readers of the ledger.
import type { LedgerCheckpoint, LedgerLine } from '../contracts/ledger.ts';
import { findLedgerHead, type LedgerRow } from '../db/ledger-repository.ts';
import { safeIntegerOf } from '../db/safe-integer.ts';
import type { Queryable } from '../infra/database.ts';
import type { GatewayKey } from '../infra/gateway-keys.ts';
import { bytesToHex, formatRfc3339MillisecondsUtc, formatRfc3339SecondsUtc, ledgerGenesisRowHash, sha256 } from '../signing/index.ts';

export {
  ledgerAccounts,
  ledgerEventKinds,
  ledgerTransactionProblems,
  queueLedgerTransaction,
  type LedgerEntry,
  type LedgerEventKind,
  type LedgerPosting,
  type LedgerSideName,
} from '../engine/ledger-posting.ts';

export interface LedgerTip {
  readonly ledgerSeq: number;
  readonly rowHash: Buffer;
}

/** The last row's sequence number and hash; an empty ledger is seq 0 at the genesis hash. */
export async function readLedgerTip(tx: Queryable, tenantId: string): Promise<LedgerTip> {
  const head = await findLedgerHead(tx, tenantId);
  return head ? { ledgerSeq: head.lastLedgerSeq, rowHash: head.lastRowHash } : { ledgerSeq: 0, rowHash: Buffer.from(ledgerGenesisRowHash) };
}

export type { LedgerCheckpoint, LedgerLine } from '../contracts/ledger.ts';

/** The signed bytes: compact JSON of exactly these four fields in this order (docs/ledger.md). */
export function ledgerCheckpointBytes(fields: { tenant_id: string; ledger_seq: number; row_hash_hex: string; issued_at: string }): Uint8Array {
  const ordered = { tenant_id: fields.tenant_id, ledger_seq: fields.ledger_seq, row_hash_hex: fields.row_hash_hex, issued_at: fields.issued_at };
  return new Uint8Array(Buffer.from(JSON.stringify(ordered), 'utf8'));
}

/** Signs a tip so that an auditor can pin it offline: Ed25519 over SHA-256 of ledgerCheckpointBytes. */
export function signLedgerCheckpoint(tenantId: string, tip: LedgerTip, key: GatewayKey, issuedAtMs: number = Date.now()): LedgerCheckpoint {
  const fields = { tenant_id: tenantId, ledger_seq: tip.ledgerSeq, row_hash_hex: tip.rowHash.toString('hex'), issued_at: formatRfc3339SecondsUtc(issuedAtMs) };
  const digest = sha256(ledgerCheckpointBytes(fields));
  return {
    ...fields,
    signing_public_key_ed25519_hex: key.publicKeyHex,
    message_digest_sha256_hex: bytesToHex(digest),
    ed25519_signature_hex: bytesToHex(key.signer.sign(digest)),
    kid: key.kid,
  };
}


/** A ledger row as JSON: the events route answers it and audit bundles carry it (`ledger.jsonl`), so an auditor
 * recomputes the chain from the same fields either way. */
export function ledgerLine(row: LedgerRow): LedgerLine {
  return {
    ledger_seq: row.ledgerSeq,
    transaction_id: row.transactionId,
    intent_id: row.intentId,
    entry_index: row.entryIndex,
    account: row.account,
    side: row.side === 0 ? 'debit' : 'credit',
    // A JSON number: one row's amount is a safe integer, as posting requires; a stored one that is not is refused.
    amount_cents: safeIntegerOf(row.amountCents, 'ledger: amount_cents'),
    currency: row.currency,
    event_kind: row.eventKind,
    recorded_at: formatRfc3339MillisecondsUtc(row.recordedAt.getTime()),
    body_hex: row.body.toString('hex'),
    prev_row_hash_hex: row.prevRowHash.toString('hex'),
    row_hash_hex: row.rowHash.toString('hex'),
  };
}
