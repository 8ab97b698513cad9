// The failover drill's bookkeeping (deploy/ha/drill/): answers counted in the window of the kill they follow, the
// first success measured from requests sent after the kill, leader changes no kill explains, and a verdict that
// fails on every broken promise and only on those.
import { describe, expect, it } from 'vitest';
import type { Acknowledgement, AnswerRecord } from '../../deploy/ha/drill/load.ts';
import { failuresOf, formatReport, noAnswers, type DrillResult } from '../../deploy/ha/drill/report.ts';
import { classify, unplannedChanges, windowsOf, type EventMark } from '../../deploy/ha/drill/windows.ts';

const answer = (sentAtMs: number, atMs: number, status: number, extra: Partial<AnswerRecord> = {}): AnswerRecord => ({
  sentAtMs, atMs, status, mutation: true, retryAfter: false, summary: `${status} POST /harbor/intents`, ...extra,
});
const ack = (atMs: number, tookMs: number): Acknowledgement => ({ tenantId: 't', intentId: 'i', step: 'fund', atMs, tookMs });

const passing = (): DrillResult => ({
  configuration: '2 replicas', seconds: 30, steady: { ...noAnswers(), ok: 10 },
  events: [{ label: 'primary kill 1', kind: 'primary', promotedAfterMs: 3_000, promoted: 'node2', promotedWasSyncStandby: true, firstSuccessAfterMs: 4_000, slowestMutationMs: 5_000, answers: { ...noAnswers(), ok: 5, unavailableWithRetryAfter: 3 } }],
  acknowledged: 12, lifecyclesCompleted: 3, lost: [], duplicated: [], abandoned: [], refused: [], serverErrorSamples: [],
  unavailableWithoutRetryAfterSamples: [], unexpectedDeaths: [], unplannedLeaderChanges: [], sweeper: { expected: 2, refunded: 2, unrefunded: [] },
  ledgers: [{ tenantId: 't', ok: true, summary: '4 rows', problems: [] }], logs: [{ tenantId: 't', ok: true, summary: '2 heads', problems: [] }], drillErrors: [],
});

describe('classify', () => {
  it.each([
    [answer(0, 1, 0), 'noAnswer'], [answer(0, 1, 201), 'ok'], [answer(0, 1, 402), 'ok'], [answer(0, 1, 503, { retryAfter: true }), 'unavailableWithRetryAfter'],
    [answer(0, 1, 503), 'unavailableWithoutRetryAfter'], [answer(0, 1, 502), 'proxyErrors'], [answer(0, 1, 504), 'proxyErrors'],
    [answer(0, 1, 500), 'serverErrors'], [answer(0, 1, 409), 'other'],
  ] as const)('%o counts as %s', (record, column) => {
    expect(classify(record)).toBe(column);
  });
});

describe('windowsOf', () => {
  const marks: EventMark[] = [{ label: 'primary kill 1', kind: 'primary', atMs: 1_000, promotedAfterMs: 300, promoted: 'node2', promotedWasSyncStandby: true }, { label: 'replica kill 1', kind: 'replica', atMs: 5_000 }];

  it('counts each answer in the window of the last kill before it', () => {
    const { steady, events } = windowsOf(marks, {
      answers: [answer(0, 500, 201), answer(900, 1_200, 503, { retryAfter: true }), answer(1_100, 2_000, 500), answer(4_000, 5_500, 502)],
      acknowledgements: [],
    });
    expect(steady.ok).toBe(1);
    expect(events[0]!.answers).toMatchObject({ unavailableWithRetryAfter: 1, serverErrors: 1, proxyErrors: 0 });
    expect(events[1]!.answers).toMatchObject({ proxyErrors: 1 });
  });

  it('measures the first success from requests sent after the kill, not from a commit already in flight', () => {
    const { events } = windowsOf(marks, {
      answers: [answer(990, 1_010, 200), answer(1_050, 2_500, 503, { retryAfter: true }), answer(2_600, 3_200, 200), answer(2_700, 3_100, 200, { mutation: false })],
      acknowledgements: [ack(1_010, 40), ack(3_200, 2_200)],
    });
    expect(events[0]!.firstSuccessAfterMs).toBe(2_200);
    expect(events[0]!.slowestMutationMs).toBe(2_200);
    expect(events[1]!.firstSuccessAfterMs).toBeUndefined();
  });
});

describe('unplannedChanges', () => {
  it('lets each primary kill explain the first leader change after it, and reports the others', () => {
    const kills: EventMark[] = [{ label: 'primary kill 1', kind: 'primary', atMs: 1_000 }, { label: 'replica kill 1', kind: 'replica', atMs: 4_000 }];
    expect(unplannedChanges([{ to: 'node2', atMs: 1_500 }], kills)).toEqual([]);
    expect(unplannedChanges([{ to: 'node2', atMs: 500 }, { to: 'node3', atMs: 1_500 }, { to: 'node1', atMs: 6_000 }], kills)).toHaveLength(2);
  });
});

describe('failuresOf', () => {
  it('passes a drill that kept every promise, and says so', () => {
    expect(failuresOf(passing())).toEqual([]);
    expect(formatReport(passing())).toMatch(/\nPASS$/);
    expect(formatReport(passing())).toContain('| primary kill 1');
  });

  it.each<[string, (result: DrillResult) => DrillResult, RegExp]>([
    ['a lost mutation', (result) => ({ ...result, lost: ['fund of t/i acknowledged, but no fund posting'] }), /1 acknowledged mutation\(s\) lost/],
    ['a duplicated effect', (result) => ({ ...result, duplicated: ['t/i: funded 2 times'] }), /1 effect\(s\) duplicated/],
    ['a 500', (result) => ({ ...result, steady: { ...result.steady, serverErrors: 1 } }), /1 answer\(s\) 500/],
    ['a 503 without Retry-After', (result) => ({ ...result, events: [{ ...result.events[0]!, answers: { ...noAnswers(), unavailableWithoutRetryAfter: 2 } }] }), /2 answer\(s\) 503 without Retry-After/],
    ['a replica that died on its own', (result) => ({ ...result, unexpectedDeaths: ['svc1 died'] }), /replica death/],
    ['a mutation given up', (result) => ({ ...result, abandoned: ['fund of t/i'] }), /still failing at their deadline/],
    ['a mutation refused', (result) => ({ ...result, refused: ['fund of t/i: 409'] }), /refused/],
    ['no new primary', (result) => ({ ...result, events: [{ ...result.events[0]!, promotedAfterMs: undefined, promoted: undefined, promotedWasSyncStandby: undefined }] }), /no new primary/],
    ['an asynchronous standby promoted', (result) => ({ ...result, events: [{ ...result.events[0]!, promotedWasSyncStandby: false }] }), /not the synchronous standby/],
    ['no success after a kill', (result) => ({ ...result, events: [{ ...result.events[0]!, firstSuccessAfterMs: undefined }] }), /no mutation succeeded after it/],
    ['an expired intent the sweeper did not refund', (result) => ({ ...result, sweeper: { expected: 2, refunded: 1, unrefunded: ['t/i is funded'] } }), /1 of 2 intent\(s\) past their deadline not refunded/],
    ['a ledger that does not verify', (result) => ({ ...result, ledgers: [{ tenantId: 't', ok: false, summary: '', problems: ['gap'] }] }), /ledger of t does not verify/],
    ['an inconsistent log', (result) => ({ ...result, logs: [{ tenantId: 't', ok: false, summary: '', problems: ['fork'] }] }), /transparency log of t/],
    ['no acknowledgement at all', (result) => ({ ...result, acknowledged: 0 }), /no mutation was acknowledged/],
    ['a cluster that did not recover', (result) => ({ ...result, drillErrors: ['the cluster was not healthy within 180 s'] }), /not healthy/],
  ])('fails on %s', (_name, breakIt, message) => {
    const result = breakIt(passing());
    expect(failuresOf(result).join('; ')).toMatch(message);
    expect(formatReport(result)).toMatch(/\nFAIL: /);
  });
});
