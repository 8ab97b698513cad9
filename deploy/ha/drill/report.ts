// The failover drill's findings and its verdict: what it measured, as one table a person reads, and the list of
// broken promises that fail the drill (nothing lost, nothing twice, no 500, no process dead on its own, every 503
// with Retry-After, every ledger and transparency log intact). Pure: no process, no network.

/** What the clients were answered within one window of the drill (the steady load, or from one kill to the next). */
export interface AnswerCounts {
  /** 2xx, and the 402 challenges and 202 polls the fund handshake expects. */
  ok: number;
  /** 503 with `Retry-After`: the service said "not now, retry". */
  unavailableWithRetryAfter: number;
  /** 503 without it: a promise broken (the service always says when), or the proxy with no replica to send to. */
  unavailableWithoutRetryAfter: number;
  /** 502 and 504: the proxy lost the replica it had sent the request to. */
  proxyErrors: number;
  /** 500: never allowed. */
  serverErrors: number;
  /** No answer at all (a reset or refused connection, a timeout). */
  noAnswer: number;
  /** Any other status (a 409 while a first attempt still runs, say). */
  other: number;
}

export const noAnswers = (): AnswerCounts => ({
  ok: 0, unavailableWithRetryAfter: 0, unavailableWithoutRetryAfter: 0, proxyErrors: 0, serverErrors: 0, noAnswer: 0, other: 0,
});

/** One kill: the Postgres primary's, or a service replica's. */
export interface DrillEvent {
  readonly label: string;
  readonly kind: 'primary' | 'replica';
  /** Milliseconds from the kill until Patroni's new leader ran (primary kills only). */
  readonly promotedAfterMs?: number | undefined;
  /** The node Patroni promoted, and whether it was the synchronous standby when the primary died. */
  readonly promoted?: string | undefined;
  readonly promotedWasSyncStandby?: boolean | undefined;
  /** Milliseconds from the kill until the first engine mutation request sent after it was answered with success
   * (a request already in flight at the kill, whose commit came before it, does not count). */
  readonly firstSuccessAfterMs: number | undefined;
  /** The longest any mutation acknowledged in this window took, retries included. */
  readonly slowestMutationMs: number | undefined;
  readonly answers: AnswerCounts;
}

export interface TenantCheck {
  readonly tenantId: string;
  readonly ok: boolean;
  /** One line: rows and transactions for a ledger, heads checked and the tree size for a log. */
  readonly summary: string;
  readonly problems: readonly string[];
}

export interface DrillResult {
  /** How the drill was sized, as one line (replicas, clients, tenants, events, durations). */
  readonly configuration: string;
  readonly seconds: number;
  readonly steady: AnswerCounts;
  readonly events: readonly DrillEvent[];
  /** Engine mutations the clients saw acknowledged (create, fund, evidence, confirm). */
  readonly acknowledged: number;
  /** Intents whose four mutations were all acknowledged. */
  readonly lifecyclesCompleted: number;
  /** Acknowledged mutations whose effect is not in the database after the drill. */
  readonly lost: readonly string[];
  /** Effects found more than once (two fund postings for one intent, a receipt logged twice, …). */
  readonly duplicated: readonly string[];
  /** Mutations whose client gave up: still failing after the drill's per-mutation deadline. */
  readonly abandoned: readonly string[];
  /** Mutations refused with an answer a retry cannot change (a 4xx other than 409 in progress and 429). */
  readonly refused: readonly string[];
  /** 500 answers, as the clients received them (status, code, request id). */
  readonly serverErrorSamples: readonly string[];
  /** 503 answers without Retry-After, as received. */
  readonly unavailableWithoutRetryAfterSamples: readonly string[];
  /** Service replicas that died without being killed by the drill, with the last lines they logged. */
  readonly unexpectedDeaths: readonly string[];
  /** Patroni leader changes no kill of the drill explains (a missed lease under load, say). */
  readonly unplannedLeaderChanges: readonly string[];
  /** Intents funded just before the first kill with a deadline just after it: the maintenance sweeper must have
   * refunded each once the cluster was whole again (its lock and timer survived the switch). */
  readonly sweeper: { readonly expected: number; readonly refunded: number; readonly unrefunded: readonly string[] };
  /** `svc ledger verify` of each tenant, and the transparency log check of each. */
  readonly ledgers: readonly TenantCheck[];
  readonly logs: readonly TenantCheck[];
  /** Anything else that went wrong while driving the cluster (it did not recover in time, say). */
  readonly drillErrors: readonly string[];
}

/** Every broken promise, one line each; empty when the drill passed. */
export function failuresOf(result: DrillResult): string[] {
  const failures: string[] = [];
  const count = (items: readonly unknown[], what: string) => {
    if (items.length > 0) failures.push(`${items.length} ${what}`);
  };
  count(result.lost, 'acknowledged mutation(s) lost');
  count(result.duplicated, 'effect(s) duplicated');
  const serverErrors = totalOf(result).serverErrors;
  if (serverErrors > 0) failures.push(`${serverErrors} answer(s) 500`);
  const withoutRetryAfter = totalOf(result).unavailableWithoutRetryAfter;
  if (withoutRetryAfter > 0) failures.push(`${withoutRetryAfter} answer(s) 503 without Retry-After`);
  count(result.unexpectedDeaths, 'service replica death(s) the drill did not cause');
  count(result.abandoned, 'mutation(s) still failing at their deadline');
  count(result.refused, 'mutation(s) refused');
  for (const event of result.events) {
    if (event.kind === 'primary' && event.promotedAfterMs === undefined) failures.push(`${event.label}: no new primary`);
    if (event.kind === 'primary' && event.promotedWasSyncStandby === false) failures.push(`${event.label}: promoted ${event.promoted}, not the synchronous standby`);
    if (event.firstSuccessAfterMs === undefined) failures.push(`${event.label}: no mutation succeeded after it`);
  }
  if (result.sweeper.refunded < result.sweeper.expected) {
    failures.push(`${result.sweeper.expected - result.sweeper.refunded} of ${result.sweeper.expected} intent(s) past their deadline not refunded by the sweeper`);
  }
  for (const check of result.ledgers) if (!check.ok) failures.push(`ledger of ${check.tenantId} does not verify`);
  for (const check of result.logs) if (!check.ok) failures.push(`transparency log of ${check.tenantId} is not consistent`);
  if (result.acknowledged === 0) failures.push('no mutation was acknowledged at all');
  failures.push(...result.drillErrors);
  return failures;
}

/** The answers of the whole drill, steady load and every window together. */
export function totalOf(result: Pick<DrillResult, 'steady' | 'events'>): AnswerCounts {
  const total = noAnswers();
  for (const counts of [result.steady, ...result.events.map((event) => event.answers)]) {
    for (const key of Object.keys(total) as (keyof AnswerCounts)[]) total[key] += counts[key];
  }
  return total;
}

const seconds = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);

/** The table and the findings, as printed at the end of the drill. */
export function formatReport(result: DrillResult): string {
  const rows: string[][] = [[
    'window', 'kill → new primary', 'kill → first success', 'slowest mutation', 'ok', '503 + Retry-After', '503 without', '502/504', 'no answer', '500', 'other',
  ]];
  const countsRow = (counts: AnswerCounts) => [
    String(counts.ok), String(counts.unavailableWithRetryAfter), String(counts.unavailableWithoutRetryAfter), String(counts.proxyErrors),
    String(counts.noAnswer), String(counts.serverErrors), String(counts.other),
  ];
  rows.push(['steady load (before the first kill)', '—', '—', '—', ...countsRow(result.steady)]);
  for (const event of result.events) {
    const promoted = event.kind === 'primary'
      ? `${seconds(event.promotedAfterMs)}${event.promoted ? ` (${event.promoted}${event.promotedWasSyncStandby ? ', sync' : ', NOT sync'})` : ''}`
      : '—';
    rows.push([event.label, promoted, seconds(event.firstSuccessAfterMs), seconds(event.slowestMutationMs), ...countsRow(event.answers)]);
  }
  rows.push(['whole drill', '', '', '', ...countsRow(totalOf(result))]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  const table = [line(rows[0]!), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.slice(1).map(line)];

  const verified = (checks: readonly TenantCheck[]) => `${checks.filter((check) => check.ok).length}/${checks.length}`;
  const failures = failuresOf(result);
  const lines = [
    `failover drill: ${result.configuration}; ${result.seconds.toFixed(0)} s of load`,
    '',
    ...table,
    '',
    `acknowledged mutations         ${result.acknowledged} (${result.lifecyclesCompleted} lifecycles complete)`,
    `lost                           ${result.lost.length}`,
    `duplicated                     ${result.duplicated.length}`,
    `answered 500                   ${totalOf(result).serverErrors}`,
    `503 with Retry-After           ${totalOf(result).unavailableWithRetryAfter}`,
    `replica deaths not caused      ${result.unexpectedDeaths.length}`,
    `unplanned leader changes       ${result.unplannedLeaderChanges.length}`,
    `sweeper after the switch       ${result.sweeper.refunded}/${result.sweeper.expected} intents past their deadline refunded`,
    `svc ledger verify              ${verified(result.ledgers)} tenants ok${result.ledgers.map((check) => `; ${check.tenantId}: ${check.summary}`).join('')}`,
    `transparency logs consistent   ${verified(result.logs)} tenants${result.logs.map((check) => `; ${check.tenantId}: ${check.summary}`).join('')}`,
  ];
  const detail = (title: string, items: readonly string[]) => {
    if (items.length === 0) return;
    lines.push('', `${title} (${items.length}${items.length > 10 ? ', first 10' : ''}):`, ...items.slice(0, 10).map((item) => `  - ${item}`));
  };
  detail('lost', result.lost);
  detail('duplicated', result.duplicated);
  detail('500 answers', result.serverErrorSamples);
  detail('503 answers without Retry-After', result.unavailableWithoutRetryAfterSamples);
  detail('replica deaths the drill did not cause', result.unexpectedDeaths);
  detail('unplanned leader changes', result.unplannedLeaderChanges);
  detail('intents past their deadline not refunded', result.sweeper.unrefunded);
  detail('abandoned mutations', result.abandoned);
  detail('refused mutations', result.refused);
  detail('ledger problems', result.ledgers.flatMap((check) => check.problems.map((problem) => `${check.tenantId}: ${problem}`)));
  detail('transparency log problems', result.logs.flatMap((check) => check.problems.map((problem) => `${check.tenantId}: ${problem}`)));
  lines.push('', failures.length === 0 ? 'PASS' : `FAIL: ${failures.join('; ')}`);
  return lines.join('\n');
}
