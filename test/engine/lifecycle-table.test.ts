// The lifecycle table (src/engine/lifecycle.ts) is the one source of the intent lifecycle: the migrations' state
// CHECK, the repository's state list, every engine route's roles, docs/engine.md's command table and state diagram
// are all held to it here. Intent rows are read with the checked integer conversion ledger rows use.
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromStates, lifecycle, lifecycleStates, terminalStates, transitionOf, type LifecycleCommand, type Transition } from '../../src/engine/lifecycle.ts';
import { findIntent, intentStates } from '../../src/db/intent-repository.ts';
import { Database } from '../../src/infra/database.ts';
import type { RouteAccess } from '../../src/plugins/access.ts';
import { bearer, buildTestApp, createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { projectRoot } from '../helpers/server-process.ts';
import { commandTableHeader, commandTableRows, diagramEdges } from './lifecycle-docs.ts';

let database: TestDatabase;
let app: FastifyInstance;
const routes = new Map<string, RouteAccess>();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, undefined, undefined, (instance) => {
    instance.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.set(`${method} ${route.url}`, route.config!.access!);
    });
  });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const commands = Object.entries(lifecycle) as Array<[string, LifecycleCommand]>;
const engineDoc = () => fs.readFileSync(`${projectRoot}docs/engine.md`, 'utf8');

/** The lines of docs/engine.md between `<!-- name:start -->` and `<!-- name:end -->`. */
function docSection(name: string): string[] {
  const text = engineDoc();
  const start = text.indexOf(`<!-- ${name}:start -->`);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  expect(start, `docs/engine.md has the ${name} markers`).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  return text.slice(start, end).split('\n').slice(1).map((line) => line.trim()).filter((line) => line !== '');
}

describe('the lifecycle table', () => {
  it('names exactly the states of the intents table CHECK and of the repository', async () => {
    const db = new Database({ ...database.connection, max: 1 });
    try {
      const definitions = await db.system(async (tx) =>
        (await tx.query<{ definition: string }>(
          `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
           WHERE conrelid = 'intents'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%'`,
        )).rows.map((row) => row.definition),
      );
      expect(definitions).toHaveLength(1);
      const checked = [...definitions[0]!.matchAll(/'([a-z_]+)'::text/g)].map((match) => match[1]);
      expect(new Set(checked)).toEqual(new Set(lifecycleStates));
    } finally {
      await db.close();
    }
    expect([...intentStates]).toEqual([...lifecycleStates]);
  });

  it('moves only between known states, never out of a terminal one, and posts a balanced shape on every money move', () => {
    for (const [name, command] of commands) {
      for (const transition of command.transitions as readonly Transition[]) {
        for (const from of transition.from) {
          expect(lifecycleStates, name).toContain(from);
          expect(terminalStates as readonly string[], `${name} leaves terminal ${from}`).not.toContain(from);
        }
        expect(lifecycleStates, name).toContain(transition.to);
        if (transition.posting) expect(transition.posting.debit, name).not.toBe(transition.posting.credit);
        // Receipts are issued at terminal transitions only (the terminal effects).
        if (transition.receipts.length > 0) expect(terminalStates as readonly string[], name).toContain(transition.to);
      }
    }
    expect(fromStates('confirm')).toEqual(['funded', 'evidence_recorded']);
    expect(transitionOf('fund', 'open', 'funded').posting).toEqual({ eventKind: 'fund', debit: 'escrow', credit: 'railFunding' });
    expect(() => transitionOf('fund', 'funded', 'funded')).toThrow();
  });

  it("is what every engine route declares: its roles are the route's config.access.roles", () => {
    for (const [name, command] of commands) {
      if (command.route === null) {
        expect(command.roles, `${name} runs without a credential`).toBeNull();
        continue;
      }
      const access = routes.get(`${command.route.method} ${command.route.url}`);
      expect(access, `${name}: ${command.route.method} ${command.route.url} is registered`).toBeDefined();
      expect('roles' in access! ? [...access.roles].sort() : access, name).toEqual([...command.roles!].sort());
    }
  });

  it("is docs/engine.md's command table, row for row", () => {
    expect(docSection('lifecycle-table').filter((line) => !/^\|( --- \|)+$/.test(line))).toEqual([commandTableHeader, ...commandTableRows()]);
  });

  it("is docs/engine.md's state diagram, edge for edge", () => {
    const edges = docSection('lifecycle-diagram').filter((line) => line.includes('-->'));
    expect(new Set(edges)).toEqual(new Set(diagramEdges()));
    expect(edges).toHaveLength(diagramEdges().length);
  });
});

it('reads intent amounts with the checked integer conversion: one past 2^53 − 1 is an error, not a rounding', async () => {
  const tenant = await createTestTenant(database.connection, 'sandbox');
  const body = signedCreateBody({ tenantId: tenant.tenantId, principal: party('did:principal:alice'), payee: party('did:payee:tools-inc') });
  const created = await app.inject({ method: 'POST', url: '/harbor/intents', headers: bearer(tenant.adminKey), payload: body });
  expect(created.statusCode, created.body).toBe(201);
  const intentId = body.intent_id as string;
  const db = new Database({ ...database.connection, max: 1 });
  try {
    expect((await db.tenant(tenant.tenantId, (tx) => findIntent(tx, tenant.tenantId, intentId)))!.amountCents).toBe(body.amount_cents);
    // As the owner: no request can store such an amount (the body caps it at 2^53 − 1).
    const owner = new Database({ ...database.connection, max: 1 });
    try {
      await owner.pool.query(`UPDATE intents SET amount_cents = 9007199254740993 WHERE intent_id = $1`, [intentId]);
    } finally {
      await owner.close();
    }
    await expect(db.tenant(tenant.tenantId, (tx) => findIntent(tx, tenant.tenantId, intentId))).rejects.toThrow(/intents.amount_cents 9007199254740993 is not a safe integer/);
  } finally {
    await db.close();
  }
});
