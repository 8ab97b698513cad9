// Database transactions (src/infra/database.ts, class Transaction) on real Postgres and on PGlite: BEGIN and the
// role and tenant settings travel with the first statement, batches share one round trip, beforeCommit statements
// travel with COMMIT, failures anywhere commit nothing and reach the caller, and a pool of one connection stays usable.
// Round trips are counted by spying on pg.Client's `query`: one call is one round trip.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { databasePreparedStatementsMax } from '../../src/limits.ts';
import { Database, type Queryable, type Statement } from '../../src/infra/database.ts';
import { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from '../helpers/database.ts';

/** A statement whose result is read by `read`. */
const statement = <T>(text: string, values: readonly unknown[], read: (result: pg.QueryResult) => T): Statement<T> => ({ text, values, read });

const newTenantId = (): string => `t-${randomBytes(6).toString('hex')}`;

const insertTenantRow = (tenantId: string, environment = 'sandbox'): Statement<string> =>
  statement(
    'INSERT INTO tenants (tenant_id, tenant_uuid, environment) VALUES ($1, gen_random_uuid(), $2) RETURNING tenant_id',
    [tenantId, environment],
    (result) => result.rows[0].tenant_id as string,
  );

/** An api_keys row (the table svc_app may write, under row-level security). Its secret travels as bytes. */
const insertApiKeyRow = (tenantId: string, name: string): Statement<string> =>
  statement(
    `INSERT INTO api_keys (key_id, tenant_id, kind, role, name, secret_sha256)
     VALUES ($1, $2, 'standard', 'operator', $3, $4) RETURNING key_id`,
    [`key_${randomBytes(16).toString('hex')}`, tenantId, name, randomBytes(32)],
    (result) => result.rows[0].key_id as string,
  );

/** What the transaction can see of itself and of the tables, as one statement. */
const whoAmI = statement(
  `SELECT current_user AS role, current_setting('app.tenant_id', true) AS tenant,
          (SELECT coalesce(array_agg(tenant_id ORDER BY tenant_id), '{}') FROM tenants WHERE tenant_id IN ('alpha', 'beta')) AS tenants,
          (SELECT coalesce(array_agg(DISTINCT tenant_id ORDER BY tenant_id), '{}') FROM api_keys) AS key_tenants`,
  [],
  (result) => result.rows[0] as { role: string; tenant: string | null; tenants: string[]; key_tenants: string[] },
);

interface SentQuery {
  readonly text: string;
  readonly values: unknown;
}

/** Records every query a pg client sends from here on (restored after each test). */
function watchRoundTrips(): () => SentQuery[] {
  const spy = vi.spyOn(pg.Client.prototype, 'query');
  // A lone statement goes as a query config ({name, text, values}), so that each connection prepares it once.
  return () =>
    spy.mock.calls.map((call: unknown[]) => {
      const config = call[0] as string | { text: string; values?: unknown };
      return typeof config === 'string' ? { text: config, values: call[1] } : { text: config.text, values: config.values };
    });
}

describe.each([
  ['postgres', createTestDatabase],
  ['pglite', createEmbeddedTestDatabase],
] as const)('Transaction on %s', (kind, create) => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await create();
    // One connection, so that a connection left in a bad state by one transaction would be the next one's.
    database = new Database({ ...testDatabase.connection, max: 1 });
    await database.system(async (tx) => {
      await tx.batch([insertTenantRow('alpha'), insertTenantRow('beta', 'live')]);
      await tx.batch([insertApiKeyRow('alpha', 'alpha-seed'), insertApiKeyRow('beta', 'beta-seed')]);
    });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  /** Whether a tenant row is committed, seen by the login role (a superuser, not bound by row-level security). */
  const tenantCommitted = async (tenantId: string): Promise<boolean> =>
    (await database.pool.query('SELECT 1 FROM tenants WHERE tenant_id = $1', [tenantId])).rowCount === 1;

  const apiKeyCommitted = async (name: string): Promise<boolean> =>
    (await database.pool.query('SELECT 1 FROM api_keys WHERE name = $1', [name])).rowCount === 1;

  /** The pool's only connection is out of any transaction, back in its own role, and runs the next transaction. */
  async function expectPoolUsable(): Promise<void> {
    const { rows } = await database.pool.query(
      `SELECT current_user = session_user AS own_role, now() = statement_timestamp() AS outside_transaction,
              coalesce(current_setting('app.tenant_id', true), '') AS tenant`,
    );
    expect(rows[0]).toEqual({ own_role: true, outside_transaction: true, tenant: '' });
    await expect(database.tenant('alpha', (tx) => tx.batch([whoAmI]))).resolves.toEqual([
      { role: 'svc_app', tenant: 'alpha', tenants: ['alpha'], key_tenants: ['alpha'] },
    ]);
  }

  describe('round trips', () => {
    it('sends nothing, not even BEGIN, for a transaction that sends no statement, and answers its value', async () => {
      const sent = watchRoundTrips();
      await expect(database.tenant('alpha', async () => 'tenant work')).resolves.toBe('tenant work');
      await expect(database.system(async () => 'system work', { isolation: 'serializable' })).resolves.toBe('system work');
      expect(sent()).toEqual([]);
    });

    it('sends BEGIN and the tenant settings with the first statement, inlined in one round trip', async () => {
      const sent = watchRoundTrips();
      const row = await database.tenant('alpha', async (tx) => {
        const result = await tx.query('SELECT $1::text AS echo, current_user AS role', ["it's $1"]);
        expect(sent()).toHaveLength(1);
        return result.rows[0];
      });
      expect(row).toEqual({ echo: "it's $1", role: 'svc_app' });
      const [opening, commit, ...rest] = sent();
      expect(rest).toEqual([]);
      expect(opening!.text).toMatch(/^BEGIN\b/);
      expect(opening!.text).toContain("set_config('app.tenant_id', 'alpha', true)");
      expect(opening!.text).toContain(`'it''s $1'::text`);
      expect(opening!.values).toBeUndefined();
      expect(commit!.text).toBe('COMMIT');
    });

    it('answers what each read of a batch makes of its result, in order and typed, one round trip per batch', async () => {
      const sent = watchRoundTrips();
      const [first, second] = await database.system(async (tx) => {
        const opening = await tx.batch([
          statement('SELECT $1::int + 1 AS n', [41], (result) => result.rows[0].n as number),
          statement('SELECT $1::text AS t', ["a'b\\c $2 -- not a comment"], (result) => result.rows[0].t as string),
          statement('SELECT $1::text[] AS a', [['x', null, 'NULL']], (result) => result.rows[0].a as (string | null)[]),
        ]);
        expectTypeOf(opening).toEqualTypeOf<[number, string, (string | null)[]]>();
        const later = await tx.batch([
          statement('SELECT $1::bytea AS b', [new Uint8Array([0, 1, 2, 255]).subarray(1)], (result) => result.rows[0].b as Buffer),
          statement('SELECT count(*)::int AS n FROM tenants', [], (result) => result.rows[0].n as number),
          statement("SELECT $1::jsonb -> 'k' AS j", [{ k: ["it's"] }], (result) => result.rows[0].j as unknown),
        ]);
        expectTypeOf(later).toEqualTypeOf<[Buffer, number, unknown]>();
        return [opening, later] as const;
      });
      expect(first).toEqual([42, "a'b\\c $2 -- not a comment", ['x', null, 'NULL']]);
      expect(second[0]).toEqual(Buffer.from([1, 2, 255]));
      expect(second[1]).toBeGreaterThanOrEqual(2);
      expect(second[2]).toEqual(["it's"]);
      const texts = sent().map((query) => query.text);
      expect(texts).toHaveLength(3);
      expect(texts[0]).toMatch(/^BEGIN\b/);
      expect(texts[1]).toContain('count(*)');
      expect(texts[2]).toBe('COMMIT');
      expect(sent().every((query) => query.values === undefined)).toBe(true);
    });

    it('sends a lone statement after the first through the extended protocol, values as parameters, prepared by name', async () => {
      const sent = watchRoundTrips();
      const spy = () => vi.mocked(pg.Client.prototype.query).mock.calls.map((call) => call[0] as unknown);
      const echo = statement('SELECT $1::text AS echo', ["'; SELECT 'x"], (result) => result.rows[0].echo as string);
      const answers = await database.tenant('alpha', async (tx) => {
        await tx.query('SELECT 1');
        const viaQuery = (await tx.query('SELECT $1::text AS echo', ["'; SELECT 'x"])).rows[0]!.echo as string;
        const viaRun = await tx.run(echo);
        const [viaBatch] = await tx.batch([echo]);
        return [viaQuery, viaRun, viaBatch];
      });
      expect(answers).toEqual(["'; SELECT 'x", "'; SELECT 'x", "'; SELECT 'x"]);
      const lone = sent().slice(1, 4);
      expect(lone).toEqual(Array.from({ length: 3 }, () => ({ text: 'SELECT $1::text AS echo', values: ["'; SELECT 'x"] })));
      expect(sent()).toHaveLength(5);
      const names = spy().slice(1, 4).map((config) => (config as { name?: string }).name);
      if (kind === 'pglite') {
        // Connections share PGlite's one session: a name prepared by one would collide with another's.
        expect(names).toEqual([undefined, undefined, undefined]);
      } else {
        expect(names[0]).toMatch(/^svc_\d+$/);
        expect(new Set(names).size).toBe(1);
      }
    });

    it('prepares at most databasePreparedStatementsMax texts by name; later texts run unnamed', async () => {
      const calls = vi.spyOn(pg.Client.prototype, 'query');
      const texts = Array.from({ length: databasePreparedStatementsMax + 20 }, (_, index) => `SELECT ${index}::int + $1::int AS n`);
      const answers = await database.system(async (tx) => {
        await tx.query('SELECT 1');
        const sums: number[] = [];
        for (const text of texts) sums.push((await tx.query<{ n: number }>(text, [1])).rows[0]!.n);
        return sums;
      });
      expect(answers).toEqual(texts.map((_, index) => index + 1));
      const names = calls.mock.calls.slice(1, -1).map((call) => (call[0] as { name?: string }).name);
      expect(names).toHaveLength(texts.length);
      expect(new Set(names.filter((name) => name !== undefined)).size).toBeLessThanOrEqual(databasePreparedStatementsMax);
      expect(names.at(-1)).toBeUndefined();
    });

    it('sends statements queued with beforeCommit with COMMIT, in one round trip, and commits them', async () => {
      const [early, queuedFirst, queuedSecond] = [newTenantId(), newTenantId(), newTenantId()];
      const sent = watchRoundTrips();
      await database.system(async (tx) => {
        await tx.query(insertTenantRow(early).text, insertTenantRow(early).values);
        tx.beforeCommit(insertTenantRow(queuedFirst));
        tx.beforeCommit(insertTenantRow(queuedSecond));
        expect(sent()).toHaveLength(1);
      });
      const [, commit, ...rest] = sent();
      expect(rest).toEqual([]);
      expect(commit!.text).toContain(`'${queuedFirst}'`);
      expect(commit!.text).toContain(`'${queuedSecond}'`);
      expect(commit!.text).toMatch(/\bCOMMIT$/);
      for (const tenantId of [early, queuedFirst, queuedSecond]) expect(await tenantCommitted(tenantId)).toBe(true);
    });

    it('sends the opening, the queued statements and COMMIT as one round trip when nothing else was sent', async () => {
      const queued = [newTenantId(), newTenantId()];
      const sent = watchRoundTrips();
      await database.system(async (tx) => {
        for (const tenantId of queued) tx.beforeCommit(insertTenantRow(tenantId));
      });
      expect(sent()).toHaveLength(1);
      expect(sent()[0]!.text).toMatch(/^BEGIN\b[\s\S]*\bCOMMIT$/);
      for (const tenantId of queued) expect(await tenantCommitted(tenantId)).toBe(true);
    });

    it('sends queued statements that take a shared lock after the others, in rank, then key, then queue order', async () => {
      const [plainFirst, rankTwo, rankOneKeyB, rankOneKeyA, plainSecond, rankOneKeyless] = [newTenantId(), newTenantId(), newTenantId(), newTenantId(), newTenantId(), newTenantId()];
      const sent = watchRoundTrips();
      await database.system(async (tx) => {
        tx.beforeCommit(insertTenantRow(plainFirst));
        tx.beforeCommit(insertTenantRow(rankTwo), { rank: 2 });
        tx.beforeCommit(insertTenantRow(rankOneKeyB), { rank: 1, key: 'b' });
        tx.beforeCommit(insertTenantRow(rankOneKeyA), { rank: 1, key: 'a' });
        tx.beforeCommit(insertTenantRow(plainSecond));
        tx.beforeCommit(insertTenantRow(rankOneKeyless), { rank: 1 });
      });
      const commit = sent().at(-1)!.text;
      const order = [plainFirst, plainSecond, rankOneKeyless, rankOneKeyA, rankOneKeyB, rankTwo];
      expect([...order].sort((a, b) => commit.indexOf(`'${a}'`) - commit.indexOf(`'${b}'`))).toEqual(order);
      for (const tenantId of order) expect(await tenantCommitted(tenantId)).toBe(true);
    });
  });

  describe('scope', () => {
    it("applies the tenant's row-level security to the first batch", async () => {
      const [alphaView, updated] = await database.tenant('alpha', (tx) =>
        tx.batch([whoAmI, statement(`UPDATE api_keys SET name = 'stolen' WHERE tenant_id = 'beta'`, [], (result) => result.rowCount)]),
      );
      expect(alphaView).toEqual({ role: 'svc_app', tenant: 'alpha', tenants: ['alpha'], key_tenants: ['alpha'] });
      expect(updated).toBe(0);
      const [betaView] = await database.tenant('beta', (tx) => tx.batch([whoAmI]));
      expect(betaView).toEqual({ role: 'svc_app', tenant: 'beta', tenants: ['beta'], key_tenants: ['beta'] });
      const [systemView] = await database.system((tx) => tx.batch([whoAmI]));
      expect(systemView).toMatchObject({ role: 'svc_system', tenants: ['alpha', 'beta'], key_tenants: ['alpha', 'beta'] });
    });

    it("refuses a write into another tenant in the first batch, and commits none of the batch", async () => {
      const [own, foreign] = [`own-${newTenantId()}`, `foreign-${newTenantId()}`];
      await expect(database.tenant('beta', (tx) => tx.batch([insertApiKeyRow('beta', own), insertApiKeyRow('alpha', foreign)]))).rejects.toThrow(
        /row-level security/,
      );
      expect(await apiKeyCommitted(own)).toBe(false);
      expect(await apiKeyCommitted(foreign)).toBe(false);
      await expectPoolUsable();
    });

    it('applies the tenant scope to queued statements sent with the opening at commit', async () => {
      const foreign = `foreign-${newTenantId()}`;
      await expect(
        database.tenant('alpha', async (tx) => {
          tx.beforeCommit(insertApiKeyRow('beta', foreign));
        }),
      ).rejects.toThrow(/row-level security/);
      expect(await apiKeyCommitted(foreign)).toBe(false);
      await expectPoolUsable();
    });

    it('sends the isolation level with the opening', async () => {
      const sent = watchRoundTrips();
      const [isolation] = await database.system(
        (tx) => tx.batch([statement('SHOW transaction_isolation', [], (result) => result.rows[0].transaction_isolation as string)]),
        { isolation: 'serializable' },
      );
      expect(isolation).toBe('serializable');
      expect(sent()).toHaveLength(2);
    });
  });

  describe('failures', () => {
    it('rolls back earlier batches and earlier statements of a failing batch, and hands the error to the caller', async () => {
      const [early, before, after] = [newTenantId(), newTenantId(), newTenantId()];
      let batchError: unknown;
      const outcome = database.system(async (tx) => {
        await tx.batch([insertTenantRow(early)]);
        try {
          await tx.batch([insertTenantRow(before), insertTenantRow('alpha'), insertTenantRow(after)]);
        } catch (error) {
          batchError = error;
          throw error;
        }
      });
      await expect(outcome).rejects.toMatchObject({ code: '23505', constraint: 'tenants_pkey' });
      await expect(outcome).rejects.toBe(batchError);
      for (const tenantId of [early, before, after]) expect(await tenantCommitted(tenantId)).toBe(false);
      await expectPoolUsable();
    });

    it('rolls back when the first batch, the one carrying BEGIN, fails', async () => {
      const before = newTenantId();
      await expect(database.system((tx) => tx.batch([insertTenantRow(before), insertTenantRow(newTenantId(), 'staging')]))).rejects.toMatchObject({
        code: '23514',
      });
      expect(await tenantCommitted(before)).toBe(false);
      await expectPoolUsable();
    });

    it('rolls back when a lone statement fails after the first', async () => {
      const early = newTenantId();
      await expect(
        database.system(async (tx) => {
          await tx.query(insertTenantRow(early).text, insertTenantRow(early).values);
          await tx.query(insertTenantRow('beta').text, insertTenantRow('beta').values);
        }),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await tenantCommitted(early)).toBe(false);
      await expectPoolUsable();
    });

    it('commits nothing when a beforeCommit statement violates a unique constraint, and rejects', async () => {
      const [early, queued] = [newTenantId(), newTenantId()];
      await expect(
        database.system(async (tx) => {
          await tx.batch([insertTenantRow(early)]);
          tx.beforeCommit(insertTenantRow(queued));
          tx.beforeCommit(insertTenantRow('alpha'));
          return 'work finished';
        }),
      ).rejects.toMatchObject({ code: '23505', constraint: 'tenants_pkey' });
      expect(await tenantCommitted(early)).toBe(false);
      expect(await tenantCommitted(queued)).toBe(false);
      await expectPoolUsable();
    });

    it('commits nothing when a beforeCommit statement fails a check in a tenant transaction, and rejects', async () => {
      const [kept, queued] = [`kept-${newTenantId()}`, `queued-${newTenantId()}`];
      await expect(
        database.tenant('alpha', async (tx) => {
          await tx.batch([insertApiKeyRow('alpha', kept)]);
          tx.beforeCommit(insertApiKeyRow('alpha', queued));
          tx.beforeCommit(insertApiKeyRow('alpha', 'x'.repeat(129)));
        }),
      ).rejects.toMatchObject({ code: '23514' });
      expect(await apiKeyCommitted(kept)).toBe(false);
      expect(await apiKeyCommitted(queued)).toBe(false);
      await expectPoolUsable();
    });

    it('commits nothing when a beforeCommit statement fails with nothing sent before it', async () => {
      const queued = newTenantId();
      await expect(
        database.system(async (tx) => {
          tx.beforeCommit(insertTenantRow(queued));
          tx.beforeCommit(insertTenantRow(newTenantId(), 'staging'));
        }),
      ).rejects.toMatchObject({ code: '23514' });
      expect(await tenantCommitted(queued)).toBe(false);
      await expectPoolUsable();
    });

    it('sends nothing queued when the work throws after beforeCommit, and rolls back what was sent', async () => {
      const [early, queued] = [newTenantId(), newTenantId()];
      const sent = watchRoundTrips();
      await expect(
        database.system(async (tx) => {
          await tx.batch([insertTenantRow(early)]);
          tx.beforeCommit(insertTenantRow(queued));
          throw new Error('work failed');
        }),
      ).rejects.toThrow('work failed');
      expect(sent().map((query) => query.text).slice(1)).toEqual(['ROLLBACK']);
      expect(sent().some((query) => query.text.includes(queued))).toBe(false);
      expect(await tenantCommitted(early)).toBe(false);
      expect(await tenantCommitted(queued)).toBe(false);
      await expectPoolUsable();
    });

    it('sends nothing at all when the work throws after beforeCommit before any statement', async () => {
      const queued = newTenantId();
      const sent = watchRoundTrips();
      await expect(
        database.tenant('alpha', async (tx) => {
          tx.beforeCommit(insertApiKeyRow('alpha', queued));
          throw new Error('work failed');
        }),
      ).rejects.toThrow('work failed');
      expect(sent()).toEqual([]);
      expect(await apiKeyCommitted(queued)).toBe(false);
      await expectPoolUsable();
    });
  });

  describe('undoableOnError', () => {
    it('undoes what the work sent and queued after a failed statement, and commits what follows, with no round trip of its own', async () => {
      const [kept, undone, queuedUndone, after] = [newTenantId(), newTenantId(), newTenantId(), newTenantId()];
      const committed: string[] = [];
      const sent = watchRoundTrips();
      await database.system(async (tx) => {
        await tx.batch([insertTenantRow(kept)]);
        await expect(tx.undoableOnError(async () => {
          await tx.batch([insertTenantRow(undone)]);
          tx.beforeCommit(insertTenantRow(queuedUndone));
          tx.afterCommit(() => committed.push('undone'));
          await tx.batch([insertTenantRow(newTenantId(), 'staging')]);
        })).rejects.toMatchObject({ code: '23514' });
        tx.beforeCommit(insertTenantRow(after));
        tx.afterCommit(() => committed.push('after'));
      });
      // The opening, the savepoint with the work's first batch, its failing batch, and the rollback to the savepoint
      // with the queued statement and COMMIT.
      const texts = sent().map((query) => query.text);
      expect(texts).toHaveLength(4);
      expect(texts[1]).toMatch(/^SAVEPOINT undoable_\d+\n; INSERT/);
      expect(texts[3]).toMatch(/^ROLLBACK TO SAVEPOINT undoable_\d+\n; INSERT[^]*\n; COMMIT$/);
      expect(await Promise.all([kept, undone, queuedUndone, after].map(tenantCommitted))).toEqual([true, false, false, true]);
      expect(committed).toEqual(['after']);
      await expectPoolUsable();
    });

    it('drops an unsent savepoint when the work throws before any statement, and answers the work\'s value otherwise', async () => {
      const [queuedUndone, kept] = [newTenantId(), newTenantId()];
      const sent = watchRoundTrips();
      await database.system(async (tx) => {
        await expect(tx.undoableOnError(async () => {
          tx.beforeCommit(insertTenantRow(queuedUndone));
          throw new Error('refused before any statement');
        })).rejects.toThrow('refused before any statement');
        await expect(tx.undoableOnError(async () => tx.run(insertTenantRow(kept)))).resolves.toBe(kept);
      });
      const texts = sent().map((query) => query.text);
      expect(texts.filter((text) => text.includes('SAVEPOINT'))).toHaveLength(1);
      expect(await Promise.all([queuedUndone, kept].map(tenantCommitted))).toEqual([false, true]);
      await expectPoolUsable();
    });
  });

  describe('undoableOnError with lone statements', () => {
    it('sends a due savepoint with a lone statement, or on its own before one that carries a byte string', async () => {
      const [kept, keyName] = [newTenantId(), `key-${newTenantId()}`];
      await database.system(async (tx) => tx.query('SELECT 1'));
      const sent = watchRoundTrips();
      await database.system(async (tx) => {
        await tx.query('SELECT 1');
        await tx.undoableOnError(async () => tx.run(insertTenantRow(kept)));
        // api_keys.secret_sha256 is a byte string: inlined, it would be read as text where a parameter is bytea.
        await tx.undoableOnError(async () => tx.run(insertApiKeyRow('alpha', keyName)));
      });
      const texts = sent().map((query) => query.text);
      expect(texts[1]).toMatch(/^SAVEPOINT undoable_\d+\n; INSERT INTO tenants/);
      expect(texts[2]).toMatch(/^SAVEPOINT undoable_\d+$/);
      expect(texts[3]).toMatch(/^\s*INSERT INTO api_keys/);
      expect(sent()[3]!.values).toEqual(expect.arrayContaining([keyName]));
      expect(await tenantCommitted(kept)).toBe(true);
      expect(await apiKeyCommitted(keyName)).toBe(true);
      await expectPoolUsable();
    });
  });

  // Regressions of bugs found in review. Each uses a database of its own, since the first bug, back, would leave a
  // connection inside an open transaction.
  describe('regressions', () => {
    const withOwnDatabase = async (use: (own: Database) => Promise<void>): Promise<void> => {
      const own = new Database({ ...testDatabase.connection, max: 1 });
      try {
        await use(own);
      } finally {
        await own.close();
      }
    };

    // Joined with '; ', a statement that ends in a `--` comment commented out the rest of the round trip: here
    // COMMIT, so the transaction stayed open on a connection that went back to the pool as svc_system. (Checked on
    // that connection itself: on PGlite, another connection would wait for the open transaction.)
    it('commits a queued statement whose text ends in a line comment', async () => {
      const queued = newTenantId();
      await withOwnDatabase(async (own) => {
        await own.system(async (tx) => {
          await tx.query('SELECT 1');
          tx.beforeCommit({ ...insertTenantRow(queued), text: `${insertTenantRow(queued).text} -- the comment` });
        });
        const { rows } = await own.pool.query('SELECT current_user = session_user AS own_role, now() = statement_timestamp() AS outside_transaction');
        expect(rows[0]).toEqual({ own_role: true, outside_transaction: true });
      });
      expect(await tenantCommitted(queued)).toBe(true);
    });

    // The same join in a batch: the second statement was commented out, and its read got no result.
    it('answers every statement of a batch whose first statement ends in a line comment', async () => {
      await withOwnDatabase(async (own) => {
        const answers = await own.system(async (tx) => {
          await tx.query('SELECT 1');
          return tx.batch([
            statement('SELECT 1 AS n -- the comment', [], (result) => result.rows[0].n as number),
            statement('SELECT 2 AS n', [], (result) => result.rows[0].n as number),
          ]);
        });
        expect(answers).toEqual([1, 2]);
      });
    });

    // #send took the opening before inlining; when inlining refused the first statement, BEGIN and the settings were
    // lost, and a caller that caught the error ran its next statements outside any transaction, as the login role.
    // Postgres answers COMMIT with ROLLBACK after a failed statement whose error the work caught; the transaction
    // must not look committed.
    it('rejects when the work caught a failed statement and returned, and commits nothing', async () => {
      const queued = newTenantId();
      await withOwnDatabase(async (own) => {
        await expect(
          own.system(async (tx) => {
            await tx.run(insertTenantRow(queued));
            await tx.query('SELECT 1 / 0').catch(() => undefined);
          }),
        ).rejects.toThrow(/rolled back/);
        await own.system(async (tx) => tx.query('SELECT 1'));
      });
      expect(await tenantCommitted(queued)).toBe(false);
    });

    it('keeps the tenant scope after the first statement is refused by inlining', async () => {
      await withOwnDatabase(async (own) => {
        const view = await own.tenant('alpha', async (tx: Queryable) => {
          await expect(tx.query('SELECT $2::text', ['only one value'])).rejects.toThrow(/\$2 without a value/);
          return tx.run(whoAmI);
        });
        expect(view).toMatchObject({ role: 'svc_app', tenant: 'alpha' });
      });
    });
  });
});
