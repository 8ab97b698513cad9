// Values rendered as SQL literals (src/infra/sql-literals.ts): the exact literal for each kind of value, where
// `$n` is and is not replaced, what the scanner refuses; then, on a real Postgres, that an inlined statement sent
// through the simple protocol answers exactly what the same statement answers with its values as parameters.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeLiteral, inlineParameters, sqlLiteral, type SqlText } from '../../src/infra/sql-literals.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

describe('sqlLiteral', () => {
  it.each([
    ['null', null, 'NULL'],
    ['undefined', undefined, 'NULL'],
    ['true', true, "'true'"],
    ['false', false, "'false'"],
    ['an integer', 42, "'42'"],
    ['a negative fraction', -1.5, "'-1.5'"],
    ['NaN', Number.NaN, "'NaN'"],
    ['a bigint beyond 2^53', 12345678901234567890n, "'12345678901234567890'"],
    ['a plain string', 'plain', "'plain'"],
    ['the empty string', '', "''"],
    ['a string with quotes, doubled', `it's "quoted"`, `'it''s "quoted"'`],
    ['a string with a backslash, as an escape string', 'a\\b', ` E'a\\\\b'`],
    ['a string that looks like a parameter', '$1', "'$1'"],
    ['an empty array', [], "'{}'"],
    ['a string array, elements quoted and NULL kept', ['a', 'b"c', null, "d'e"], ` E'{"a","b\\\\"c",NULL,"d''e"}'`],
    ['an object, as JSON', { a: 1, b: "it's" }, `'{"a":1,"b":"it''s"}'`],
    ['an object with toPostgres', { toPostgres: (): string => 'custom' }, "'custom'"],
    ['an object whose toPostgres answers null', { toPostgres: (): null => null }, 'NULL'],
  ] as const)('renders %s', (_name, value, literal) => {
    expect(sqlLiteral(value)).toBe(literal);
  });

  it('renders bytes as bytea hex: a Buffer, a Uint8Array, an empty one', () => {
    expect(sqlLiteral(Buffer.from([0x00, 0x01, 0xff]))).toBe(` E'\\\\x0001ff'`);
    expect(sqlLiteral(new Uint8Array([0xde, 0xad]))).toBe(` E'\\\\xdead'`);
    expect(sqlLiteral(new Uint8Array(0))).toBe(` E'\\\\x'`);
  });

  it('renders only the viewed bytes of a subarray (byteOffset and byteLength honoured)', () => {
    const whole = new Uint8Array([9, 9, 1, 2, 3, 9]);
    expect(sqlLiteral(whole.subarray(2, 5))).toBe(` E'\\\\x010203'`);
    const slice = Buffer.from([7, 7, 0xab, 0xcd, 7]).subarray(2, 4);
    expect(slice.byteOffset).toBeGreaterThan(0);
    expect(sqlLiteral(slice)).toBe(` E'\\\\xabcd'`);
  });

  it('renders bytes an object turns into through toPostgres as bytea hex too', () => {
    expect(sqlLiteral({ toPostgres: () => Buffer.from([1, 2]) })).toBe(` E'\\\\x0102'`);
  });

  it('renders a Date as a timestamp with its offset, to the millisecond, whatever the local time zone', () => {
    const instant = new Date('2024-02-29T23:59:58.765Z');
    const literal = sqlLiteral(instant);
    expect(literal).toMatch(/^'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d'$/);
    expect(new Date(literal.slice(1, -1)).getTime()).toBe(instant.getTime());
  });
});

describe('escapeLiteral', () => {
  it('writes what pg.escapeLiteral writes, for any text', () => {
    const texts = fc.oneof(fc.string({ unit: fc.constantFrom("'", '\\', '"', 'a', ' ', 'E', '\u00e9', '\u{1F600}') }), fc.string({ unit: 'binary' }));
    fc.assert(fc.property(texts, (text) => escapeLiteral(text) === pg.escapeLiteral(text)), { numRuns: 2000 });
  });
});

describe('inlineParameters', () => {
  const inline = (text: string, values?: readonly unknown[]): string => inlineParameters(values === undefined ? { text } : { text, values });

  it('replaces each $n with the literal of values[n - 1], casts and all', () => {
    expect(inline('SELECT $1::text, $2 + 1, $1', ['a', 2])).toBe("SELECT 'a'::text, '2' + 1, 'a'");
  });

  it('leaves a statement without parameters as it is, with or without values', () => {
    expect(inline('SELECT 1')).toBe('SELECT 1');
    expect(inline('SELECT 1', ['unused'])).toBe('SELECT 1');
    expect(inline('')).toBe('');
  });

  it('reads $10 as the tenth value, not as $1 followed by 0', () => {
    const values = Array.from({ length: 10 }, (_, index) => `v${index + 1}`);
    expect(inline('SELECT $1, $10, $2', values)).toBe("SELECT 'v1', 'v10', 'v2'");
  });

  it('renders NULL for a null or undefined value', () => {
    expect(inline('SELECT $1, $2', [null, undefined])).toBe('SELECT NULL, NULL');
  });

  it('does not scan a rendered value again', () => {
    expect(inline('SELECT $1, $2', ['$2', 'y'])).toBe("SELECT '$2', 'y'");
  });

  it.each([
    ['a string literal', "SELECT '$1', $1", "SELECT '$1', 'x'"],
    ['a string literal with a doubled quote', "SELECT 'it''s $1', $1", "SELECT 'it''s $1', 'x'"],
    ['a quoted identifier', 'SELECT 1 AS "$1", $1', `SELECT 1 AS "$1", 'x'`],
    ['a quoted identifier with a doubled quote and an apostrophe', `SELECT 1 AS "a""'$1", $1`, `SELECT 1 AS "a""'$1", 'x'`],
    ['a line comment', 'SELECT $1 -- not $1\n, $1', "SELECT 'x' -- not $1\n, 'x'"],
    ['a line comment at the very end', 'SELECT $1 -- $1', "SELECT 'x' -- $1"],
    ['a line comment holding a quote', "SELECT $1 -- don't\n, $1", "SELECT 'x' -- don't\n, 'x'"],
    ['a block comment', 'SELECT /* $1 */ $1', "SELECT /* $1 */ 'x'"],
    ['a block comment over lines, holding a quote', "SELECT /* it's\n $1 */ $1", "SELECT /* it's\n $1 */ 'x'"],
    ['nothing: comment markers inside a string are text', "SELECT '--', $1, '/*', $1", "SELECT '--', 'x', '/*', 'x'"],
  ])('leaves $n inside %s alone', (_where, text, rendered) => {
    expect(inline(text, ['x'])).toBe(rendered);
  });

  it.each([
    ['$2 with one value', 'SELECT $1, $2', ['a'], /\$2 without a value/],
    ['$1 with no values at all', 'SELECT $1', undefined, /\$1 without a value/],
    ['$0', 'SELECT $0', ['a'], /\$0 without a value/],
    ['a backslash outside quotes', 'SELECT 1 \\gset', [], /backslash/],
    ['a dollar-quoted string', 'SELECT $$text$$', [], /dollar quote/],
    ['a tagged dollar quote', 'DO $body$ BEGIN END $body$', [], /dollar quote/],
    ['an unterminated string', "SELECT 'open, $1", ['a'], /unterminated quote/],
    ['an unterminated identifier', 'SELECT "open, $1', ['a'], /unterminated quote/],
    ['an unterminated block comment', 'SELECT 1 /* open $1', ['a'], /unterminated comment/],
  ] as const)('refuses %s', (_what, text, values, message) => {
    expect(() => inline(text, values)).toThrow(message);
  });

  it('renders every kind of value in place', () => {
    const bytes = new Uint8Array([0, 0x10, 0x20, 0]).subarray(1, 3);
    expect(inline('INSERT INTO t VALUES ($1, $2, $3, $4, $5)', [true, 7n, bytes, ['a', null], { k: [1] }])).toBe(
      `INSERT INTO t VALUES ('true', '7',  E'\\\\x1020', '{"a",NULL}', '{"k":[1]}')`,
    );
  });
});

// Where the scanner and Postgres could disagree about what is quoted or commented (found in review, now refused or
// read as Postgres reads them). Against Postgres, the first two let a value's text run as SQL: with the value
// ' || current_user || ' the first answered "' postgres ".
describe('inlineParameters: texts Postgres reads differently from a naive scanner', () => {
  const refusedOrRendered = (text: string, expected: string): void => {
    let rendered: string;
    try {
      rendered = inlineParameters({ text, values: ['x'] });
    } catch {
      return;
    }
    expect(rendered).toBe(expected);
  };

  it('a backslash inside quotes: E-strings escape quotes the scanner counts', () => {
    // Postgres reads one string, E'\' $1 ', so $1 is text; the scanner closes the string at \'.
    refusedOrRendered("SELECT E'\\' $1 ' -- \\'\n AS a", "SELECT E'\\' $1 ' -- \\'\n AS a");
  });

  it('a nested block comment: Postgres nests /* */, the scanner ends at the first */', () => {
    refusedOrRendered('SELECT /* /* */ $1 */ 1 AS a', 'SELECT /* /* */ $1 */ 1 AS a');
  });

  it('a line comment ended by a lone carriage return, as Postgres ends it', () => {
    refusedOrRendered('SELECT 1 AS a -- c\r, $1 AS b', "SELECT 1 AS a -- c\r, 'x' AS b");
  });

  it('a dollar sign inside an identifier is not a parameter', () => {
    expect(() => inlineParameters({ text: 'SELECT a$1 FROM t', values: ['x'] })).toThrow(/inside an identifier/);
  });
});

describe('inlined statements on Postgres mean what their parameterized form means', () => {
  let testDatabase: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    testDatabase = await createTestDatabase({ migrate: false });
    pool = new pg.Pool({ ...testDatabase.connection, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await testDatabase?.drop();
  });

  /** The `value` column of `statement` through the simple protocol (values inlined) and the extended one. */
  async function bothWays(statement: SqlText): Promise<{ simple: unknown; extended: unknown }> {
    const simple = await pool.query(inlineParameters(statement));
    const extended = await pool.query(statement.text, statement.values as unknown[]);
    return { simple: simple.rows[0]?.value, extended: extended.rows[0]?.value };
  }

  // Characters Postgres text can hold (all but NUL), weighted toward what could break quoting or the scanner.
  const awkwardPiece = fc.constantFrom("'", "''", '"', '\\', '\\\\', "\\'", '$', '$1', '$$', '$10', '--', '/*', '*/', '\n', '\r', ';', "E'", ' ', '{', '}', ',', 'NULL');
  const anyCharacter = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((character) => character !== '\0');
  const awkwardText = fc.string({ unit: fc.oneof(awkwardPiece, anyCharacter), maxLength: 40 });

  it('round-trips arbitrary text, quotes, backslashes and $1 included', async () => {
    await fc.assert(
      fc.asyncProperty(awkwardText, async (text) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::text AS value', values: [text] });
        expect(simple).toBe(extended);
        expect(simple).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips arbitrary bytes as bytea, subarrays included', async () => {
    const bytes = fc
      .tuple(fc.uint8Array({ maxLength: 64 }), fc.nat(8), fc.nat(8))
      .map(([array, head, tail]) => array.subarray(Math.min(head, array.length), Math.max(Math.min(head, array.length), array.length - tail)));
    await fc.assert(
      fc.asyncProperty(bytes, async (value) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::bytea AS value', values: [value] });
        expect(simple).toEqual(extended);
        expect(Buffer.from(value).equals(simple as Buffer)).toBe(true);
      }),
    );
  });

  it('round-trips JSON text as jsonb, and objects passed as they are', async () => {
    const noNul = (value: unknown): boolean => !JSON.stringify(value).includes('\\u0000');
    const jsonText = fc.jsonValue({ stringUnit: 'binary' }).filter(noNul).map((value) => JSON.stringify(value));
    await fc.assert(
      fc.asyncProperty(jsonText, async (value) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::jsonb::text AS value', values: [value] });
        expect(simple).toBe(extended);
      }),
    );
    const object = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ stringUnit: 'binary' })).filter(noNul);
    await fc.assert(
      fc.asyncProperty(object, async (value) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::jsonb::text AS value', values: [value] });
        expect(simple).toBe(extended);
      }),
    );
  });

  it('round-trips text arrays, NULL elements and the string "NULL" included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(awkwardText, { nil: null }), { maxLength: 8 }), async (value) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::text[] AS value', values: [value] });
        expect(simple).toEqual(extended);
        expect(simple).toEqual(value);
      }),
    );
  });

  it('round-trips integers, bigints across int8 and doubles', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), async (value) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::int4 AS value', values: [value] });
        expect(simple).toBe(extended);
        expect(simple).toBe(value);
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), async (value) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::int8 AS value', values: [value] });
        expect(simple).toBe(extended);
        expect(simple).toBe(String(value));
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.double(), async (value) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::float8 AS value', values: [value] });
        expect(simple).toEqual(extended);
        // String(-0) is "0", so negative zero arrives as zero either way.
        expect(simple).toEqual(value + 0);
      }),
    );
  });

  it('round-trips Dates as timestamptz, to the millisecond', async () => {
    const date = fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true });
    await fc.assert(
      fc.asyncProperty(date, async (value) => {
        const { simple, extended } = await bothWays({ text: 'SELECT $1::timestamptz AS value', values: [value] });
        expect(simple).toEqual(extended);
        expect((simple as Date).getTime()).toBe(value.getTime());
      }),
    );
  });

  it.each([
    ['a boolean', 'SELECT $1::boolean AS value', [false]],
    ['NULL', 'SELECT $1::text AS value', [null]],
    ['an untyped value in arithmetic', 'SELECT $1 + 1 AS value', [41]],
    ['an untyped value where a function fixes the type', 'SELECT jsonb_typeof($1) AS value', [{ k: 'v' }]],
    ['an untyped array under ANY', "SELECT 'b' = ANY($1) AS value", [['a', 'b']]],
    ['an untyped value in SELECT', 'SELECT $1 AS value', ["it's"]],
    ['a value in LIMIT', 'SELECT count(*) AS value FROM (SELECT generate_series(1, 10) LIMIT $1) AS limited', [3]],
  ] as const)('gives Postgres the same type for %s', async (_what, text, values) => {
    const { simple, extended } = await bothWays({ text, values });
    expect(simple).toEqual(extended);
    expect(simple).not.toBeUndefined();
  });

  it('runs several inlined statements in one simple-protocol query, each answering', async () => {
    const text = [
      inlineParameters({ text: 'SELECT $1::text AS value', values: ["a'; SELECT 'b"] }),
      inlineParameters({ text: 'SELECT $1::int * 2 AS value', values: [21] }),
    ].join('; ');
    const results = (await pool.query(text)) as unknown as pg.QueryResult[];
    expect(results.map((result) => result.rows[0]?.value)).toEqual(["a'; SELECT 'b", 42]);
  });
});
