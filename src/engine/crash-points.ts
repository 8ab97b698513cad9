// Test-only crash points: the process kills itself (SIGKILL, as a crash would) at a named point when the environment
// variable SVC_TEST_CRASH_AT names it. Unset, as in every deployment, nothing happens. test/engine/fund-phases.test.ts
// uses `fund.after_phase1` to show that a crash between the two phases of funding loses and duplicates nothing.
// `fund.after_rail_call` (test/rails/live-x402.test.ts): the rail has settled, our second phase has not committed.
// test/rails/live-fund-takeover.test.ts uses both for the retries of a client that lost its answer.
// `instruct.after_rail_call` (test/rails/live-x402-escrow.test.ts, live-mpp-split.test.ts): the sweeper's rail call
// (a capture, void, payout or refund) answered, its outcome not yet recorded. `instruct.after_record`
// (test/rails/live-x402-escrow-crash.test.ts, live-mpp-settle-crash.test.ts): an instruction's outcome committed; a
// split's refund, which waits for its payout, not yet asked of the rail.
// `group.before_commit` (test/engine/group-crash.test.ts): every command of a group of two or more has run in the
// group's transaction, whose COMMIT has not been sent.
// `webhook.after_send` (test/services/webhook-deliverer-crash.test.ts): a webhook attempt's POST was answered, its
// outcome not yet recorded; the rest of the deliverer's batch is still in flight.
export type CrashPoint =
  | 'fund.after_phase1'
  | 'fund.after_rail_call'
  | 'instruct.after_rail_call'
  | 'instruct.after_record'
  | 'group.before_commit'
  | 'webhook.after_send';

const armed = process.env.SVC_TEST_CRASH_AT;

export function crashPoint(name: CrashPoint): void {
  if (armed === name) process.kill(process.pid, 'SIGKILL');
}
