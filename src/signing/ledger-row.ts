// The ledger row body (our format, `format_version` 2, bincode 2) and the per-tenant hash chain over it:
// row_hash = SHA-256(prev_row_hash ‖ body), starting from 32 zero bytes (docs/signing.md).
import { bincodeType as t, encodeBincode, type StructFields } from './bincode.ts';
import { sha256 } from './digests.ts';
import { valueInvalid } from './encoding.ts';
import { parseRfc3339MillisecondsUtc } from './rfc3339.ts';

export const ledgerRowFormatVersion = 2;
export const ledgerRowHashLength = 32;
/** The `prev_row_hash` of a tenant's first row. */
export const ledgerGenesisRowHash: Uint8Array = new Uint8Array(ledgerRowHashLength);

export const ledgerSides = { debit: 0, credit: 1 } as const;
export type LedgerSide = (typeof ledgerSides)[keyof typeof ledgerSides];

const ledgerRowBodyFields: StructFields = [
  ['format_version', t.u8],
  ['tenant_id', t.string],
  ['ledger_seq', t.u64],
  ['transaction_id', t.uuid],
  ['intent_id', t.uuid],
  ['entry_index', t.u32],
  ['account', t.string],
  ['side', t.u8],
  ['amount_cents', t.i64],
  ['currency', t.string],
  ['event_kind', t.string],
  ['recorded_at', t.string],
];
export const ledgerRowBodyLayout = t.struct(ledgerRowBodyFields);

const seqFieldIndex = ledgerRowBodyFields.findIndex(([name]) => name === 'ledger_seq');
/** The fields before and after ledger_seq: a struct's encoding is its fields' encodings one after another. */
const bodyHeadLayout = t.struct(ledgerRowBodyFields.slice(0, seqFieldIndex));
const bodyTailLayout = t.struct(ledgerRowBodyFields.slice(seqFieldIndex + 1));

export interface LedgerRowBody {
  readonly tenant_id: string;
  /** Gapless per tenant; a bigint or a safe integer. */
  readonly ledger_seq: number | bigint;
  readonly transaction_id: string;
  readonly intent_id: string;
  /** Position of this row within its balanced transaction. */
  readonly entry_index: number;
  readonly account: string;
  readonly side: LedgerSide;
  /** Positive; the side says which way the money moves. */
  readonly amount_cents: number | bigint;
  readonly currency: string;
  /** What moved the money, e.g. `fund`, `release`, `refund`. */
  readonly event_kind: string;
  /** RFC 3339 UTC with milliseconds, `2026-11-22T15:04:05.123Z` (formatRfc3339MillisecondsUtc). */
  readonly recorded_at: string;
}

/** The bytes of LedgerRowBodyV2. Values the chain must never hold are refused, not encoded. */
export function encodeLedgerRowBody(row: LedgerRowBody): Uint8Array {
  checkLedgerRowBody(row);
  return encodeBincode(ledgerRowBodyLayout, { format_version: ledgerRowFormatVersion, ...row });
}

export type LedgerRowBodyWithoutSeq = Omit<LedgerRowBody, 'ledger_seq'>;

/**
 * The body's bytes before and after its ledger_seq, so that head ‖ varint(ledger_seq) ‖ tail is
 * encodeLedgerRowBody of the row. The seq is only known under the tenant's head lock, which is taken inside
 * Postgres (ledger_post, migrations/0011_ledger_post.sql): the service encodes the rest and Postgres places the seq.
 */
export function encodeLedgerRowBodyAroundSeq(row: LedgerRowBodyWithoutSeq): { readonly head: Uint8Array; readonly tail: Uint8Array } {
  checkLedgerRowBody(row);
  const { tenant_id: tenantId, ...tail } = row;
  return {
    head: encodeBincode(bodyHeadLayout, { format_version: ledgerRowFormatVersion, tenant_id: tenantId }),
    tail: encodeBincode(bodyTailLayout, tail),
  };
}

function checkLedgerRowBody(row: LedgerRowBodyWithoutSeq): void {
  if (row.side !== ledgerSides.debit && row.side !== ledgerSides.credit) valueInvalid('side', 'must be 0 (debit) or 1 (credit)');
  if (!(typeof row.amount_cents === 'bigint' ? row.amount_cents > 0n : row.amount_cents > 0)) {
    valueInvalid('amount_cents', 'must be positive');
  }
  for (const field of ['tenant_id', 'account', 'currency', 'event_kind'] as const) {
    if (row[field] === '') valueInvalid(field, 'must not be empty');
  }
  parseRfc3339MillisecondsUtc(row.recorded_at, 'recorded_at');
}

/** SHA-256(prev_row_hash ‖ body). */
export function ledgerRowHash(prevRowHash: Uint8Array, body: Uint8Array): Uint8Array {
  if (!(prevRowHash instanceof Uint8Array) || prevRowHash.length !== ledgerRowHashLength) {
    valueInvalid('prev_row_hash', `must be exactly ${ledgerRowHashLength} bytes`);
  }
  const chained = new Uint8Array(ledgerRowHashLength + body.length);
  chained.set(prevRowHash, 0);
  chained.set(body, ledgerRowHashLength);
  return sha256(chained);
}
