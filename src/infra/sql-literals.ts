// Parameterized statements rendered with their values as literals, so that several travel in one round trip.
//
// Postgres's simple query protocol runs a string of `;`-separated statements in one message but takes no
// parameters; the extended protocol takes parameters but one statement per round trip (node-postgres does not
// pipeline). Round trips are what the engine's hot path pays for most (docs/performance.md), so Database
// batches statements through the simple protocol with the values rendered here.
//
// Each value becomes a quoted literal of the text pg itself would send for it (`pg.utils.prepareValue`), and a
// quoted literal is untyped exactly like a parameter: Postgres infers its type from the same context, so a
// statement means the same either way. Byte strings become bytea hex text. The SQL text itself comes from our
// code, never from input; it is still scanned properly, so a `$1` inside a quoted string is left alone, and
// constructs the scanner does not model (backslashes, dollar quoting, nested comments) are refused rather than
// guessed at. A byte string is only ever inlined where Postgres reads bytea: pg sends Buffers as binary parameters,
// so in another context (length($1) of text) the two forms would differ.
import pg from 'pg';

// node-postgres exports its parameter serializer at runtime (`pg.utils`) but not in its type declarations.
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils;

/** A parameterized statement, as `Queryable.query` takes it. */
export interface SqlText {
  readonly text: string;
  readonly values?: readonly unknown[];
}

/** `pg.escapeLiteral`, byte for byte (quotes and backslashes doubled, ` E` before a literal holding a backslash),
 * without its loop over every character: the receipts' and the evidence's values are kilobytes of text, escaped on
 * every terminal transition. */
export function escapeLiteral(text: string): string {
  const quoted = `'${text.replaceAll("'", "''").replaceAll('\\', '\\\\')}'`;
  return text.includes('\\') ? ` E${quoted}` : quoted;
}

/** The literal Postgres reads as `value`, for a place where a parameter would have stood. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Uint8Array) return escapeLiteral(`\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`);
  const prepared = prepareValue(value);
  if (prepared === null) return 'NULL';
  if (prepared instanceof Uint8Array) return sqlLiteral(prepared);
  return escapeLiteral(String(prepared));
}

/** `text` with every `$n` outside quotes and comments replaced by the literal of `values[n - 1]`. */
export function inlineParameters({ text, values = [] }: SqlText): string {
  let rendered = '';
  let copiedUpTo = 0;
  let index = 0;
  const fail = (problem: string): never => {
    throw new Error(`inlineParameters: ${problem} at offset ${index} of: ${text.slice(0, 120)}`);
  };
  // Anywhere, a backslash could be an escape-string escape (E'\'') that moves where a quoted run ends.
  if (text.includes('\\')) fail('a backslash (escape strings are not supported)');
  while (index < text.length) {
    const char = text[index]!;
    if (char === "'" || char === '"') {
      // A doubled quote inside a quoted run closes and reopens it, which this loop handles as two runs.
      const close = text.indexOf(char, index + 1);
      if (close < 0) fail('an unterminated quote');
      index = close + 1;
    } else if (char === '-' && text[index + 1] === '-') {
      // Postgres ends a line comment at a line feed or a carriage return.
      const end = text.slice(index).search(/[\n\r]/);
      index = end < 0 ? text.length : index + end + 1;
    } else if (char === '/' && text[index + 1] === '*') {
      const end = text.indexOf('*/', index + 2);
      if (end < 0) fail('an unterminated comment');
      // Postgres nests block comments; the scanner does not, so it refuses them.
      if (text.slice(index + 2, end).includes('/*')) fail('a nested comment');
      index = end + 2;
    } else if (char === '$') {
      // `$` inside an identifier (a$1) or opening a dollar quote ($$, $tag$) is not a parameter.
      if (index > 0 && /[\p{L}\p{N}_$]/u.test(text[index - 1]!)) fail('a dollar sign inside an identifier');
      let end = index + 1;
      while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end += 1;
      if (end === index + 1) fail('a dollar quote');
      const position = Number(text.slice(index + 1, end));
      if (position < 1 || position > values.length) fail(`$${position} without a value`);
      rendered += text.slice(copiedUpTo, index) + sqlLiteral(values[position - 1]);
      copiedUpTo = end;
      index = end;
    } else {
      index += 1;
    }
  }
  return rendered + text.slice(copiedUpTo);
}
