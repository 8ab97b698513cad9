// The periodic pass behind the app's timers (src/infra/background.ts): the first pass and the interval, no two passes
// at once, a failure reported and the next tick run anyway, and `stop` waiting for the pass in flight.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PeriodicPass } from '../../src/infra/background.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A pass that stays running until `finish` is called. */
function controlledPasses() {
  const finishers: (() => void)[] = [];
  let started = 0;
  const pass = () => {
    started += 1;
    return new Promise<void>((resolve) => finishers.push(resolve));
  };
  return { pass, started: () => started, finish: () => finishers.shift()!() };
}

describe('PeriodicPass', () => {
  it('runs a first pass soon after start, then one per interval, and nothing before start', async () => {
    const passes = controlledPasses();
    const timer = new PeriodicPass({ intervalMs: 1_000, firstPassDelayMs: 100, pass: passes.pass, onError: () => {} });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(passes.started()).toBe(0);
    timer.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(passes.started()).toBe(1);
    passes.finish();
    await vi.advanceTimersByTimeAsync(900);
    expect(passes.started()).toBe(2);
    passes.finish();
    await timer.stop();
  });

  it('skips the ticks that find a pass still running, so a slow pass is never overlapped', async () => {
    const passes = controlledPasses();
    const timer = new PeriodicPass({ intervalMs: 1_000, pass: passes.pass, onError: () => {} });
    timer.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(passes.started()).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(passes.started()).toBe(1);
    passes.finish();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(passes.started()).toBe(2);
    passes.finish();
    await timer.stop();
  });

  it('reports a failed pass and runs the next tick anyway', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const timer = new PeriodicPass({
      intervalMs: 1_000,
      pass: async () => {
        calls += 1;
        if (calls === 1) throw new Error('database unreachable');
      },
      onError: (error) => errors.push(error),
    });
    timer.start();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls).toBe(2);
    expect(errors).toEqual([new Error('database unreachable')]);
    await timer.stop();
  });

  it('stops its timers and waits for the pass in flight', async () => {
    const passes = controlledPasses();
    const timer = new PeriodicPass({ intervalMs: 1_000, pass: passes.pass, onError: () => {} });
    timer.start();
    await vi.advanceTimersByTimeAsync(1_000);
    let stopped = false;
    const stopping = timer.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    passes.finish();
    await stopping;
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(passes.started()).toBe(1);
  });
});
