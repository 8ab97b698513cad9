// The engine's decisions, pure: given the intent as locked, the command's input, what was loaded for it and the
// time, what the command does (the transition, the ledger posting, the receipts its terminal effects issue, the
// facts its answer carries) or the error it answers. No database, no clock, no randomness: the command loads (and
// locks) before, passes the time and any generated id in, and writes what was decided after (src/engine/pipeline.ts,
// docs/engine.md "The command pipeline"). One module per command, in ./decide/.
export * from './decide/create.ts';
export * from './decide/fund.ts';
export * from './decide/evidence.ts';
export * from './decide/settlement.ts';
export * from './decide/sandbox.ts';
