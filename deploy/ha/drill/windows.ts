// How the drill's raw records become its table: each answer counted in the window of the last kill before it, the
// first success and the slowest mutation of each window, and the leader changes no kill explains. Pure.
import type { LifecycleLoad, AnswerRecord } from './load.ts';
import { noAnswers, type AnswerCounts, type DrillEvent } from './report.ts';

/** A kill as the drill did it: when, and for a primary, who took over how fast. */
export interface EventMark {
  readonly label: string;
  readonly kind: 'primary' | 'replica';
  readonly atMs: number;
  promotedAfterMs?: number;
  promoted?: string;
  promotedWasSyncStandby?: boolean;
}

/** The column of the table an answer counts in. */
export function classify(answer: AnswerRecord): keyof AnswerCounts {
  if (answer.status === 0) return 'noAnswer';
  if ((answer.status >= 200 && answer.status < 300) || answer.status === 402) return 'ok';
  if (answer.status === 503) return answer.retryAfter ? 'unavailableWithRetryAfter' : 'unavailableWithoutRetryAfter';
  if (answer.status === 502 || answer.status === 504) return 'proxyErrors';
  if (answer.status === 500) return 'serverErrors';
  return 'other';
}

/** The per-window figures: answers from each kill to the next, the first acknowledgement after it, the slowest. */
export function windowsOf(marks: readonly EventMark[], load: Pick<LifecycleLoad, 'answers' | 'acknowledgements'>): { steady: AnswerCounts; events: DrillEvent[] } {
  const steady = noAnswers();
  const counts = marks.map(() => noAnswers());
  const windowOf = (atMs: number) => {
    let index = -1;
    while (index + 1 < marks.length && marks[index + 1]!.atMs <= atMs) index += 1;
    return index;
  };
  for (const answer of load.answers) {
    const index = windowOf(answer.atMs);
    (index < 0 ? steady : counts[index]!)[classify(answer)] += 1;
  }
  const events = marks.map((mark, index): DrillEvent => {
    const endMs = marks[index + 1]?.atMs ?? Number.POSITIVE_INFINITY;
    const successes = load.answers.filter((answer) => answer.mutation && answer.status >= 200 && answer.status < 300 && answer.sentAtMs >= mark.atMs);
    const inside = load.acknowledgements.filter((ack) => ack.atMs > mark.atMs && ack.atMs < endMs);
    return {
      label: mark.label,
      kind: mark.kind,
      promotedAfterMs: mark.promotedAfterMs,
      promoted: mark.promoted,
      promotedWasSyncStandby: mark.promotedWasSyncStandby,
      firstSuccessAfterMs: successes.length > 0 ? successes.reduce((first, answer) => Math.min(first, answer.atMs), Infinity) - mark.atMs : undefined,
      slowestMutationMs: inside.length > 0 ? inside.reduce((slowest, ack) => Math.max(slowest, ack.tookMs), 0) : undefined,
      answers: counts[index]!,
    };
  });
  return { steady, events };
}

/** Leader changes beyond one per primary kill (the first change to a leader after each kill is the kill's). */
export function unplannedChanges(changes: readonly { to: string; atMs: number }[], marks: readonly EventMark[]): string[] {
  const explained = new Set<number>();
  for (const mark of marks.filter((candidate) => candidate.kind === 'primary')) {
    const index = changes.findIndex((change, at) => !explained.has(at) && change.atMs >= mark.atMs);
    if (index >= 0) explained.add(index);
  }
  return changes.filter((_, index) => !explained.has(index)).map((change) => `${change.to} took the lead at ${new Date(change.atMs).toISOString()}`);
}
