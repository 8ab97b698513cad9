// `client.ledger`: the signed tip, the signing authority, the rows as events, and `verifyChain`, which recomputes
// the tenant's hash chain on the client from the events and checks it against the gateway-signed checkpoint
// (docs/ledger.md "Verifying a checkpoint offline"), so the answer does not rest on trusting the server's word.
import {
  bytesToHex,
  ed25519PublicKey,
  encodeLedgerRowBody,
  ledgerGenesisRowHash,
  ledgerRowHash,
  ledgerSides,
  sha256,
  verifyEd25519,
} from '../signing/index.ts';
import { checkedAnswer } from './answers.ts';
import type { ClientCore } from './core.ts';
import { ledgerEventsPageSize } from './defaults.ts';
import type { LedgerAuthority, LedgerCheckpoint, LedgerEvent, LedgerEventsPage, LedgerTip } from './types.ts';

export interface LedgerVerification {
  /** Chain, bodies, sequence, balanced transactions and the signed checkpoint all check out. */
  readonly ok: boolean;
  readonly rows: number;
  readonly transactions: number;
  /** The last row read (it may be past the checkpoint if money moved meanwhile). */
  readonly tipSeq: number;
  readonly tipRowHashHex: string;
  readonly checkpoint: {
    readonly ledgerSeq: number;
    readonly rowHashHex: string;
    readonly kid: string;
    /** The Ed25519 signature verifies with a trusted key. */
    readonly signatureValid: boolean;
    /** The recomputed chain reaches the checkpoint's row hash at its sequence. */
    readonly chainMatches: boolean;
  };
  /** Debits − credits per account, in cents; they sum to 0. Bigint: a balance is a sum of amounts, not bounded by
   * any limit, and passes 2^53 cents, where a number stops being exact (docs/ledger.md). */
  readonly balances: Readonly<Record<string, bigint>>;
  readonly problems: readonly string[];
}

const hexToBuffer = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, 'hex'));

/** Verifies a tip checkpoint: the digest of its four signed fields, then Ed25519 over that digest with one of the
 * trusted keys (never the key the checkpoint names by itself). Answers the problems found (empty when valid). */
export function verifyLedgerCheckpoint(checkpoint: LedgerCheckpoint, trustedPublicKeysHex: readonly string[]): string[] {
  const { tenant_id, ledger_seq, row_hash_hex, issued_at } = checkpoint;
  const digest = sha256(Buffer.from(JSON.stringify({ tenant_id, ledger_seq, row_hash_hex, issued_at }), 'utf8'));
  if (bytesToHex(digest) !== checkpoint.message_digest_sha256_hex) return ['checkpoint: the digest does not match its fields'];
  if (!/^[0-9a-f]{128}$/.test(checkpoint.ed25519_signature_hex)) return ['checkpoint: the signature is not 64 bytes of hex'];
  const signature = hexToBuffer(checkpoint.ed25519_signature_hex);
  const valid = trustedPublicKeysHex.some((keyHex) => /^[0-9a-f]{64}$/.test(keyHex) && verifyEd25519(ed25519PublicKey(hexToBuffer(keyHex)), digest, signature));
  return valid ? [] : ['checkpoint: the signature does not verify with any trusted key'];
}

/** Recomputes one row: its body from its fields (compared with the stored body) and its hash from the previous one. */
function rowProblems(tenantId: string, event: LedgerEvent, previousHashHex: string): { problems: string[]; rowHashHex: string } {
  const problems: string[] = [];
  if (!/^[0-9a-f]{64}$/.test(event.row_hash_hex) || !/^([0-9a-f]{2})+$/.test(event.body_hex) || !/^[0-9a-f]{64}$/.test(previousHashHex)) {
    return { problems: [`row ${event.ledger_seq}: hashes or body are not lowercase hex`], rowHashHex: '' };
  }
  if (event.prev_row_hash_hex !== previousHashHex) problems.push(`row ${event.ledger_seq}: prev_row_hash does not link to the previous row`);
  try {
    const recomputed = encodeLedgerRowBody({
      tenant_id: tenantId,
      ledger_seq: event.ledger_seq,
      transaction_id: event.transaction_id,
      intent_id: event.intent_id,
      entry_index: event.entry_index,
      account: event.account,
      side: ledgerSides[event.side],
      amount_cents: event.amount_cents,
      currency: event.currency,
      event_kind: event.event_kind,
      recorded_at: event.recorded_at,
    });
    if (bytesToHex(recomputed) !== event.body_hex) problems.push(`row ${event.ledger_seq}: body does not match the row's fields`);
  } catch (error) {
    problems.push(`row ${event.ledger_seq}: fields cannot be encoded (${(error as Error).message})`);
  }
  const rowHashHex = bytesToHex(ledgerRowHash(hexToBuffer(previousHashHex), hexToBuffer(event.body_hex)));
  if (rowHashHex !== event.row_hash_hex) problems.push(`row ${event.ledger_seq}: row_hash is not SHA-256(prev_row_hash ‖ body)`);
  return { problems, rowHashHex };
}

/** Running state of the walk over the events. */
class ChainWalk {
  previousHashHex = bytesToHex(ledgerGenesisRowHash);
  lastSeq = 0;
  rows = 0;
  transactions = 0;
  hashAtCheckpoint: string | undefined;
  readonly balances = new Map<string, bigint>();
  readonly problems: string[] = [];
  #open: { id: string; debits: bigint; credits: bigint; entries: number } | undefined;

  constructor(readonly tenantId: string, readonly checkpointSeq: number) {
    if (checkpointSeq === 0) this.hashAtCheckpoint = this.previousHashHex;
  }

  add(event: LedgerEvent): void {
    if (event.ledger_seq !== this.lastSeq + 1) this.problems.push(`row ${event.ledger_seq}: expected ledger_seq ${this.lastSeq + 1}`);
    const row = rowProblems(this.tenantId, event, this.previousHashHex);
    this.problems.push(...row.problems);
    // Continue from the stored hash, as `svc ledger verify` does, so one broken link is reported once.
    this.previousHashHex = event.row_hash_hex;
    this.lastSeq = event.ledger_seq;
    this.rows += 1;
    if (event.ledger_seq === this.checkpointSeq) this.hashAtCheckpoint = row.rowHashHex;
    // One amount is a safe integer; only sums need bigint. Any other amount was reported by rowProblems (its fields
    // cannot be encoded) and counts as 0 here, so the walk goes on to report the rest.
    const amountCents = Number.isSafeInteger(event.amount_cents) ? BigInt(event.amount_cents) : 0n;
    const signed = event.side === 'debit' ? amountCents : -amountCents;
    this.balances.set(event.account, (this.balances.get(event.account) ?? 0n) + signed);
    if (this.#open?.id !== event.transaction_id) this.#closeTransaction(event.transaction_id);
    const open = this.#open!;
    open.entries += 1;
    if (event.side === 'debit') open.debits += amountCents;
    else open.credits += amountCents;
  }

  finish(): void {
    this.#closeTransaction(undefined);
    const total = [...this.balances.values()].reduce((sum, balance) => sum + balance, 0n);
    if (total !== 0n) this.problems.push(`balances sum to ${total}, not 0`);
  }

  #closeTransaction(nextId: string | undefined): void {
    const open = this.#open;
    if (open) {
      this.transactions += 1;
      if (open.entries < 2) this.problems.push(`transaction ${open.id} has ${open.entries} entry`);
      if (open.debits !== open.credits) this.problems.push(`transaction ${open.id} is unbalanced: debits ${open.debits}, credits ${open.credits}`);
    }
    this.#open = nextId === undefined ? undefined : { id: nextId, debits: 0n, credits: 0n, entries: 0 };
  }
}

export class Ledger {
  readonly #core: ClientCore;

  constructor(core: ClientCore) {
    this.#core = core;
  }

  /** The last row and a checkpoint of it signed by the gateway's key. */
  async tip(): Promise<LedgerTip> {
    const { body, response } = await this.#core.get('/harbor/ledger/v1/tip');
    this.#core.checkEcho(body, response);
    return checkedAnswer('LedgerTip', body, response);
  }

  /** The key checkpoints are signed with, and every key still published for verification. */
  async authority(): Promise<LedgerAuthority> {
    const { body, response } = await this.#core.get('/harbor/ledger/v1/authority');
    this.#core.checkEcho(body, response);
    return checkedAnswer('LedgerAuthority', body, response);
  }

  /** Rows after `afterSeq`, in order (limit 1 to 256); `next_after_seq` is null on the last page. */
  async events(params: { afterSeq?: number; limit?: number } = {}): Promise<LedgerEventsPage> {
    const { body, response } = await this.#core.get('/harbor/ledger/v1/events', { after_seq: params.afterSeq, limit: params.limit });
    this.#core.checkEcho(body, response);
    return checkedAnswer('LedgerEvents', body, response);
  }

  /**
   * Verifies the whole ledger on the client: reads the signed tip, checks its signature with a trusted key (the
   * caller's `trustedPublicKeysHex`, else the keys `/authority` publishes), then walks every event from genesis,
   * re-encoding each body and recomputing each hash, and checks the chain reaches the checkpoint's hash at its seq.
   */
  async verifyChain(options: { trustedPublicKeysHex?: readonly string[] } = {}): Promise<LedgerVerification> {
    const tip = await this.tip();
    const checkpoint = tip.checkpoint;
    const trusted = options.trustedPublicKeysHex ?? (await this.authority()).verification_keys.map((key) => key.public_key_hex);
    const checkpointProblems = verifyLedgerCheckpoint(checkpoint, trusted);
    if (checkpoint.tenant_id !== this.#core.tenantId) checkpointProblems.push(`checkpoint: names tenant ${checkpoint.tenant_id}`);
    const walk = new ChainWalk(this.#core.tenantId, checkpoint.ledger_seq);
    let afterSeq = 0;
    for (;;) {
      const page = await this.events({ afterSeq, limit: ledgerEventsPageSize });
      for (const event of page.events) walk.add(event);
      if (page.next_after_seq === null || page.events.length === 0) break;
      afterSeq = page.next_after_seq;
    }
    walk.finish();
    const chainMatches = walk.hashAtCheckpoint === checkpoint.row_hash_hex;
    if (!chainMatches) walk.problems.push(`checkpoint: the chain does not reach row_hash ${checkpoint.row_hash_hex} at ledger_seq ${checkpoint.ledger_seq}`);
    const problems = [...checkpointProblems, ...walk.problems];
    return {
      ok: problems.length === 0,
      rows: walk.rows,
      transactions: walk.transactions,
      tipSeq: walk.lastSeq,
      tipRowHashHex: walk.previousHashHex,
      checkpoint: { ledgerSeq: checkpoint.ledger_seq, rowHashHex: checkpoint.row_hash_hex, kid: checkpoint.kid, signatureValid: checkpointProblems.length === 0, chainMatches },
      balances: Object.fromEntries(walk.balances),
      problems,
    };
  }
}
