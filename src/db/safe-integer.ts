// Checked conversion to a JavaScript number of a Postgres bigint (which pg hands over as text) or of a bigint sum,
// for values that a limit keeps within the safe integers: one past 2^53 − 1 would be silently rounded otherwise.

/** `value` as a number, or an Error (a broken invariant, never a client's mistake) when it is not a safe integer. */
export function safeIntegerOf(value: string | bigint, what: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new Error(`${what} ${String(value)} is not a safe integer`);
  return number;
}
