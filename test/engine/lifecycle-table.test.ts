// The lifecycle table (src/engine/lifecycle.ts) is the one source of the intent lifecycle. What the code derives from
// it is checked here as registered or derived (every engine route, the per-state ledger activity); what TypeScript
// cannot see is held to it: the migrations' state CHECK, docs/engine.md's command table, state table and diagram,
// docs/ledger.md's verifier table, the OpenAPI document's state enums, the Python SDK's IntentState and the
// settlement receipt's harbor_state values. Intent rows are read with the checked integer conversion ledger rows use.
import fs from 'node:fs';
import type { FastifyContextConfig, FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  capabilityLiveStates,
  fromStates,
  ledgerActivityByState,
  lifecycle,
  lifecycleStates,
  states,
  statesReachableFrom,
  terminalStates,
  transitionOf,
  type LifecycleCommand,
  type Transition,
} from '../../src/engine/lifecycle.ts';
import { findIntent, intentStates } from '../../src/db/intent-repository.ts';
import { Database } from '../../src/infra/database.ts';
import { artifactKinds } from '../../src/signing/artifact-kinds.ts';
import { bearer, buildTestApp, createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { party, signedCreateBody } from '../helpers/intents.ts';
import { projectRoot } from '../helpers/server-process.ts';
import { commandTableHeader, commandTableRows, diagramEdges, ledgerTableHeader, ledgerTableRows, stateTableHeader, stateTableRows } from './lifecycle-docs.ts';

let database: TestDatabase;
let app: FastifyInstance;
const routes = new Map<string, FastifyContextConfig>();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { beforeApp: (instance) => {
    instance.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.set(`${method} ${route.url}`, route.config!);
    });
  } });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const commands = Object.entries(lifecycle) as Array<[string, LifecycleCommand]>;
const readProjectFile = (file: string) => fs.readFileSync(`${projectRoot}${file}`, 'utf8');
const isTableRule = (line: string) => /^\|( --- \|)+$/.test(line);

/** The lines of a document (docs/engine.md unless named) between `<!-- name:start -->` and `<!-- name:end -->`. */
function docSection(name: string, file = 'docs/engine.md'): string[] {
  const text = readProjectFile(file);
  const start = text.indexOf(`<!-- ${name}:start -->`);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  expect(start, `${file} has the ${name} markers`).toBeGreaterThan(-1);
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
           WHERE conrelid = 'intents'::regclass AND contype = 'c' AND conname = 'intents_state_check'`,
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

  it('registers every engine route: the method, URL, roles, scope and tenant header of its table entry, and its command', () => {
    for (const [name, command] of commands) {
      if (command.route === null) continue;
      const config = routes.get(`${command.route.method} ${command.route.url}`);
      expect(config, `${name}: ${command.route.method} ${command.route.url} is registered`).toBeDefined();
      const { roles, scope, tenantHeader } = command.route;
      expect(config!.access, name).toEqual({ roles, scope, ...(tenantHeader === undefined ? {} : { tenantHeader }) });
      expect(config!.lifecycleCommand, name).toBe(name);
    }
    // No other route claims to run a command of the table.
    const claimed = [...routes].filter(([, config]) => config.lifecycleCommand !== undefined).map(([route, config]) => `${config.lifecycleCommand} ${route}`);
    expect(claimed.sort()).toEqual(commands.filter(([, command]) => command.route !== null).map(([name, command]) => `${name} ${command.route!.method} ${command.route!.url}`).sort());
    // The sweeper's command takes no credential, key or proof.
    expect(lifecycle.expire).toMatchObject({ route: null, idempotencyOperation: null, recognitionPurpose: null });
  });

  it('derives from the declared states and postings what each state means for the ledger, capabilities and settling', () => {
    expect(Object.keys(states)).toEqual([...lifecycleStates]);
    expect(terminalStates).toEqual(['released', 'refunded', 'resolved_split']);
    expect(capabilityLiveStates).toEqual(['funded', 'evidence_recorded']);
    // What the verifier has always expected of each state (docs/ledger.md), now added up from the transitions.
    const activity = (fund: number, release: number, refund: number, split: number, escrowHeld: boolean) => ({ transactions: { fund, release, refund, split }, escrowHeld });
    expect(ledgerActivityByState).toEqual({
      open: activity(0, 0, 0, 0, false),
      funded: activity(1, 0, 0, 0, true),
      evidence_recorded: activity(1, 0, 0, 0, true),
      held: activity(1, 0, 0, 0, true),
      released: activity(1, 1, 0, 0, false),
      refunded: activity(1, 0, 1, 0, false),
      resolved_split: activity(1, 0, 0, 1, false),
    });
    expect(statesReachableFrom('funded')).toEqual(['funded', 'evidence_recorded', 'held', 'released', 'refunded', 'resolved_split']);
    expect(statesReachableFrom('released')).toEqual(['released']);
    // Every terminal state is one the settlement receipt can attest (its kind refuses other values).
    const harborState = artifactKinds.get('svc.protocol_settlement_receipt_v1')!.fields.find((field) => field.name === 'harbor_state');
    expect(harborState && 'values' in harborState ? harborState.values : undefined).toEqual(expect.arrayContaining([...terminalStates]));
  });

  it('is every state enum of the OpenAPI document (the intent, the list filters, the budget and conflict answers)', async () => {
    const answer = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(answer.statusCode).toBe(200);
    // Every enum of states (of more than one value: a spend decision's `released` is a literal of its own), and each
    // names them all, in the table's order.
    const enums: unknown[][] = [];
    const isStateEnum = (values: unknown[]) => values.length > 1 && values.every((value) => lifecycleStates.includes(value as never));
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach(walk);
      const record = node as Record<string, unknown>;
      if (Array.isArray(record['enum']) && isStateEnum(record['enum'])) enums.push(record['enum']);
      Object.values(record).forEach(walk);
    };
    walk(answer.json());
    expect(enums.length).toBeGreaterThanOrEqual(4);
    for (const found of enums) expect(found).toEqual([...lifecycleStates]);
  });

  it("is the Python SDK's IntentState, which types the state of its intent answers", () => {
    const source = readProjectFile('python/svc_settlement/wire_types.py');
    const declared = /^IntentState = Literal\[([^\]]*)\]$/m.exec(source);
    expect(declared, 'wire_types.py declares IntentState = Literal[...]').not.toBeNull();
    expect([...declared![1]!.matchAll(/"([a-z_]+)"/g)].map((match) => match[1])).toEqual([...lifecycleStates]);
    for (const typedDict of ['Intent', 'FundAnswer', 'EvidenceAnswer']) {
      const body = new RegExp(`^class ${typedDict}\\(TypedDict\\):\\n((?:    .*\\n)+)`, 'm').exec(source);
      expect(body?.[1], typedDict).toMatch(/^    state: IntentState$/m);
    }
  });

  it("is docs/engine.md's command table, row for row", () => {
    expect(docSection('lifecycle-table').filter((line) => !isTableRule(line))).toEqual([commandTableHeader, ...commandTableRows()]);
  });

  it("is docs/engine.md's state table and docs/ledger.md's verifier table, row for row", () => {
    expect(docSection('lifecycle-states').filter((line) => !isTableRule(line))).toEqual([stateTableHeader, ...stateTableRows()]);
    expect(docSection('lifecycle-ledger', 'docs/ledger.md').filter((line) => !isTableRule(line))).toEqual([ledgerTableHeader, ...ledgerTableRows()]);
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
