// What the drill checks once the load has stopped and the cluster is whole again: every acknowledged mutation's
// effect is in the database exactly once, every tenant's ledger passes `svc ledger verify`, and every tree head the
// clients saw during the drill is signed and a prefix of the final one (no history rewritten by a failover).
import pg from 'pg';
import { statesReachableFrom } from '../../../src/engine/lifecycle.ts';
import { verifyArtifact } from '../../../src/signing/artifacts.ts';
import { verifyConsistency } from '../../../src/signing/merkle.ts';
import type { TenantCheck } from './report.ts';
import type { Acknowledgement, Unacknowledged } from './load.ts';
import { runCli, type HaCluster } from './cluster.ts';

interface IntentFacts {
  state: string;
  fundTransactions: number;
  settleTransactions: number;
  evidence: boolean;
  /** Receipts by kind and scope (`svc.agent_receipt_v1/intent_terminal`). */
  receipts: Map<string, number>;
}

/** Lost: an acknowledged mutation whose effect is missing. Duplicated: an effect present more than once. */
export async function checkEffects(databaseUrl: string, tenantIds: readonly string[], acknowledgements: readonly Acknowledgement[]): Promise<{ lost: string[]; duplicated: string[] }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  const facts = new Map<string, IntentFacts>();
  const duplicated: string[] = [];
  try {
    const factsOf = (tenantId: string, intentId: string): IntentFacts => {
      const key = `${tenantId}/${intentId}`;
      let found = facts.get(key);
      if (!found) facts.set(key, (found = { state: 'missing', fundTransactions: 0, settleTransactions: 0, evidence: false, receipts: new Map() }));
      return found;
    };
    const intents = await client.query<{ tenant_id: string; intent_id: string; state: string }>(
      'SELECT tenant_id, intent_id::text, state FROM intents WHERE tenant_id = ANY($1)', [tenantIds]);
    for (const row of intents.rows) factsOf(row.tenant_id, row.intent_id).state = row.state;
    const postings = await client.query<{ tenant_id: string; intent_id: string; event_kind: string; transactions: number }>(
      `SELECT tenant_id, intent_id::text, event_kind, count(DISTINCT transaction_id)::int AS transactions
         FROM ledger_rows WHERE tenant_id = ANY($1) GROUP BY 1, 2, 3`, [tenantIds]);
    for (const row of postings.rows) {
      const intent = factsOf(row.tenant_id, row.intent_id);
      if (row.event_kind === 'fund') intent.fundTransactions += row.transactions;
      else intent.settleTransactions += row.transactions;
    }
    const evidence = await client.query<{ tenant_id: string; intent_id: string }>(
      'SELECT tenant_id, intent_id::text FROM evidence_submissions WHERE tenant_id = ANY($1)', [tenantIds]);
    for (const row of evidence.rows) factsOf(row.tenant_id, row.intent_id).evidence = true;
    const receipts = await client.query<{ tenant_id: string; intent_id: string; kind: string; scope: string | null; receipts: number }>(
      `SELECT tenant_id, intent_id::text, kind, scope, count(*)::int AS receipts FROM protocol_receipts WHERE tenant_id = ANY($1) GROUP BY 1, 2, 3, 4`,
      [tenantIds]);
    for (const row of receipts.rows) factsOf(row.tenant_id, row.intent_id).receipts.set(`${row.kind}${row.scope ? `/${row.scope}` : ''}`, row.receipts);
    const leaves = await client.query<{ tenant_id: string; kind: string; artifact_id: string; leaves: number }>(
      `SELECT tenant_id, kind, artifact_id, count(*)::int AS leaves FROM transparency_log_leaves WHERE tenant_id = ANY($1)
        GROUP BY 1, 2, 3 HAVING count(*) > 1`,
      [tenantIds]);
    for (const row of leaves.rows) duplicated.push(`${row.tenant_id}: ${row.kind} ${row.artifact_id} is in the transparency log ${row.leaves} times`);
  } finally {
    await client.end().catch(() => {});
  }

  for (const [key, intent] of facts) {
    if (intent.fundTransactions > 1) duplicated.push(`${key}: funded ${intent.fundTransactions} times`);
    if (intent.settleTransactions > 1) duplicated.push(`${key}: settled ${intent.settleTransactions} times`);
    for (const [kind, count] of intent.receipts) if (count > 1) duplicated.push(`${key}: ${count} receipts ${kind}`);
  }
  const lost: string[] = [];
  for (const acknowledgement of acknowledgements) {
    const key = `${acknowledgement.tenantId}/${acknowledgement.intentId}`;
    const intent = facts.get(key);
    const missing = missingEffect(acknowledgement.step, intent);
    if (missing) lost.push(`${acknowledgement.step} of ${key} acknowledged, but ${missing}`);
  }
  return { lost, duplicated };
}

// The states an intent may be in once a step's effect is there: the state it reached and every state after it in the
// lifecycle table (a confirm or the sweeper may have moved it on since).
const fundedOrLater: readonly string[] = statesReachableFrom('funded');
const evidenceRecordedOrLater: readonly string[] = statesReachableFrom('evidence_recorded');
/** The receipts a settlement issues in the same transaction (docs/engine.md, the lifecycle table). */
const settlementReceipts = ['svc.protocol_settlement_receipt_v1', 'svc.agent_receipt_v1/intent_terminal'];

/** What is missing of an acknowledged step's effect, or undefined when all of it is there. */
function missingEffect(step: Acknowledgement['step'], intent: IntentFacts | undefined): string | undefined {
  if (!intent || intent.state === 'missing') return 'the intent does not exist';
  switch (step) {
    case 'create':
      return undefined;
    case 'fund':
      if (!fundedOrLater.includes(intent.state)) return `the intent is ${intent.state}`;
      return intent.fundTransactions === 0 ? 'no fund posting' : undefined;
    case 'evidence':
      if (!evidenceRecordedOrLater.includes(intent.state)) return `the intent is ${intent.state}`;
      return intent.evidence ? undefined : 'no evidence stored';
    case 'confirm':
      if (intent.state !== 'released') return `the intent is ${intent.state}, not released`;
      if (intent.settleTransactions === 0) return 'no release posting';
      return settlementReceipts.filter((kind) => !intent.receipts.has(kind)).map((kind) => `no ${kind}`).join(', ') || undefined;
  }
}

/**
 * Each unacknowledged mutation with what the database says of its intent: its state, its funding attempts, and
 * whether an answer is stored under the mutation's idempotency key (`drill-<intent>-<step>`), so the report shows
 * whether the effect happened without its answer.
 */
export async function describeUnacknowledged(databaseUrl: string, items: readonly Unacknowledged[]): Promise<string[]> {
  if (items.length === 0) return [];
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    const described: string[] = [];
    for (const item of items) {
      const { rows: intents } = await client.query('SELECT state FROM intents WHERE tenant_id = $1 AND intent_id = $2', [item.tenantId, item.intentId]);
      const { rows: attempts } = await client.query(
        `SELECT status, claimed_at IS NOT NULL AS claimed FROM funding_attempts WHERE tenant_id = $1 AND intent_id = $2 ORDER BY created_at`,
        [item.tenantId, item.intentId]);
      const { rows: stored } = await client.query(
        'SELECT response_status FROM idempotency_records WHERE tenant_id = $1 AND idempotency_key = $2', [item.tenantId, `drill-${item.intentId}-${item.step}`]);
      const facts = [
        `intent ${intents[0]?.state ?? 'missing'}`,
        `funding attempts: ${attempts.map((attempt) => `${attempt.status}${attempt.claimed ? ' (claimed)' : ''}`).join(', ') || 'none'}`,
        `answer stored under its key: ${stored[0]?.response_status ?? 'none'}`,
      ];
      described.push(`${item.step} of ${item.tenantId}/${item.intentId}: ${item.description} [${facts.join('; ')}]`);
    }
    return described;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Waits, at most `timeoutMs`, until every intent left funded past its deadline is refunded; answers how many were. */
export async function waitExpiredRefunded(
  databaseUrl: string,
  intents: readonly { tenantId: string; intentId: string }[],
  timeoutMs: number,
): Promise<{ refunded: number; unrefunded: string[] }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // One query at a time: a pg client runs one, and queues the others only under a deprecation warning.
      const states: string[] = [];
      for (const intent of intents) {
        const { rows } = await client.query<{ state: string }>('SELECT state FROM intents WHERE tenant_id = $1 AND intent_id = $2', [intent.tenantId, intent.intentId]);
        states.push(rows[0]?.state ?? 'missing');
      }
      const unrefunded = intents.flatMap((intent, index) => (states[index] === 'refunded' ? [] : [`${intent.tenantId}/${intent.intentId} is ${states[index]}`]));
      if (unrefunded.length === 0 || Date.now() > deadline) return { refunded: intents.length - unrefunded.length, unrefunded };
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    await client.end().catch(() => {});
  }
}

/** `svc ledger verify --json` for each tenant, as an operator runs it. */
export async function verifyLedgers(cluster: HaCluster, tenantIds: readonly string[]): Promise<TenantCheck[]> {
  const checks: TenantCheck[] = [];
  for (const tenantId of tenantIds) {
    try {
      const report = JSON.parse(await runCli(cluster, ['ledger', 'verify', '--tenant-id', tenantId, '--json'])) as {
        ok: boolean; rows: number; transactions: number; problems: string[];
      };
      checks.push({ tenantId, ok: report.ok, summary: `${report.rows} rows, ${report.transactions} transactions`, problems: report.problems });
    } catch (error) {
      checks.push({ tenantId, ok: false, summary: 'not verified', problems: [(error as Error).message] });
    }
  }
  return checks;
}

/** A signed tree head as the merkle routes answer it: of the client's kind (`root_hash_sha256_hex`), or of the
 * earlier kind (`root_hash`) that logs begun before it still hold. */
export interface TreeHead {
  readonly tree_size: number;
  readonly root_hash_sha256_hex?: string;
  readonly root_hash?: string;
  readonly [field: string]: unknown;
}

const rootOf = (head: TreeHead): string => head.root_hash_sha256_hex ?? head.root_hash ?? '';

const unhex = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));

/** The gateway's published keys (JWKS `x`, base64url) as hex: the keys a tree head must be signed by. */
async function publishedKeysHex(serviceUrl: string): Promise<string[]> {
  const jwks = (await (await fetch(`${serviceUrl}/.well-known/jwks.json`)).json()) as { keys: { x: string }[] };
  return jwks.keys.map((key) => Buffer.from(key.x, 'base64url').toString('hex'));
}

/**
 * For one tenant: waits for the head that covers every leaf the database holds, then checks every head seen during
 * the drill is signed by a published key, that no two heads of one size differ, and that each is a prefix of the
 * final head by the service's own consistency proof.
 */
export async function checkTransparencyLog(
  cluster: HaCluster,
  tenantId: string,
  adminKey: string,
  observed: readonly TreeHead[],
): Promise<TenantCheck> {
  const problems: string[] = [];
  const headers = { authorization: `Bearer ${adminKey}` };
  const client = new pg.Client({ connectionString: cluster.superuserDatabaseUrl });
  client.on('error', () => {});
  await client.connect();
  let leaves = 0;
  let unlogged = 0;
  try {
    leaves = Number((await client.query('SELECT coalesce(max(tree_size), 0) AS n FROM transparency_log_heads WHERE tenant_id = $1', [tenantId])).rows[0].n);
    unlogged = Number((await client.query('SELECT count(*) AS n FROM protocol_receipts WHERE tenant_id = $1 AND leaf_index IS NULL', [tenantId])).rows[0].n);
  } finally {
    await client.end().catch(() => {});
  }
  if (unlogged > 0) problems.push(`${unlogged} receipt(s) not in the log`);

  let final: TreeHead | undefined;
  for (let waitedMs = 0; waitedMs <= 30_000; waitedMs += 500) {
    const response = await fetch(`${cluster.serviceUrl}/harbor/ledger/v1/merkle/latest`, { headers });
    if (response.ok) final = (await response.json()) as TreeHead;
    if (final && final.tree_size >= leaves) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  if (!final) return { tenantId, ok: false, summary: 'no tree head', problems: [...problems, 'no signed tree head after the drill'] };
  if (final.tree_size !== leaves) problems.push(`the latest head covers ${final.tree_size} leaves, the log holds ${leaves}`);

  const keys = await publishedKeysHex(cluster.serviceUrl);
  const distinct = new Map<string, TreeHead>();
  for (const head of [...observed, final]) distinct.set(`${head.tree_size}:${rootOf(head)}`, head);
  const rootBySize = new Map<number, string>();
  for (const head of distinct.values()) {
    try {
      verifyArtifact(head, { trustedPublicKeys: keys });
    } catch (error) {
      problems.push(`head of size ${head.tree_size}: ${(error as Error).message}`);
    }
    const root = rootBySize.get(head.tree_size);
    if (root !== undefined && root !== rootOf(head)) problems.push(`two heads of size ${head.tree_size} with different roots: history was rewritten`);
    rootBySize.set(head.tree_size, rootOf(head));
    if (head.tree_size >= final.tree_size) continue;
    const response = await fetch(`${cluster.serviceUrl}/harbor/ledger/v1/merkle/consistency?first=${head.tree_size}&second=${final.tree_size}`, { headers });
    if (!response.ok) {
      problems.push(`no consistency proof from size ${head.tree_size}: ${response.status}`);
      continue;
    }
    const proof = (await response.json()) as { consistency_proof: string[] };
    if (!verifyConsistency(head.tree_size, final.tree_size, unhex(rootOf(head)), unhex(rootOf(final)), proof.consistency_proof.map(unhex))) {
      problems.push(`the head of size ${head.tree_size} seen during the drill is not a prefix of the final head`);
    }
  }
  return { tenantId, ok: problems.length === 0, summary: `${distinct.size} heads checked, ${final.tree_size} leaves`, problems };
}
