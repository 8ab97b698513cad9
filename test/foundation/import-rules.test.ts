// The rooms of src/ and the rules between them (docs/architecture.md, "Modules"): no import circle, no import running
// back up the layers, plugins that are hooks over infrastructure and compose no use case, the SDK reached only by the
// CLI, and one Ed25519 signing helper; and docs/architecture.md held to them (its layers and its table of rooms). Read
// from the sources with TypeScript's import scanner; type-only imports count too, since a type that runs back up is
// still a dependency a reader has to follow.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../helpers/server-process.ts';

const srcDir = path.join(projectRoot, 'src');

/** The rooms from the bottom up: a file may import its own room and the rooms below it, never one above. The SDK
 * stands beside the server (test/sdk/boundary.test.ts says what it may reach); here it only has a place. */
const layers: readonly (readonly string[])[] = [
  ['limits.ts', 'config.ts'],
  ['signing'],
  ['predicate'],
  ['policy-document'],
  ['errors'],
  ['contracts'],
  ['infra'],
  ['credentials'],
  ['rails'],
  ['sdk'],
  ['db'],
  ['engine'],
  ['plugins'],
  ['receipts'],
  ['services'],
  ['surfaces'],
  ['app.ts', 'server-options.ts'],
  ['server.ts', 'cli'],
];
const rankOf = new Map(layers.flatMap((rooms, rank) => rooms.map((room) => [room, rank] as const)));

/** The engine modules a plugin may use: the command pipeline and its answer, the lifecycle table, the observer hooks.
 * The commands themselves (create, fund, evidence, settle, expire, sandbox) and the terminal effects are use cases,
 * which the app and the surfaces compose. */
const engineMechanisms = new Set(['engine/pipeline.ts', 'engine/answer.ts', 'engine/lifecycle.ts', 'engine/observer.ts']);

const sourceFiles = fs
  .readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts'))
  .map((name) => name.split(path.sep).join('/'))
  .sort();

/** A file's room: its folder under src/, or its own name for a file at the top. */
const roomOf = (file: string): string => file.split('/')[0]!;

/** Every relative import of every file (static, dynamic, type-only, re-exports), as paths under src/. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(srcDir, file), 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => path.relative(srcDir, path.resolve(path.dirname(path.join(srcDir, file)), specifier)).split(path.sep).join('/'));
    graph.set(file, targets);
  }
  return graph;
}

/** The import circles of a graph: its strongly connected components of more than one file, or of one file importing
 * itself (Tarjan's algorithm). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, counter);
    lowLink.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        lowLink.set(file, Math.min(lowLink.get(file)!, lowLink.get(target)!));
      } else if (onStack.has(target)) {
        lowLink.set(file, Math.min(lowLink.get(file)!, index.get(target)!));
      }
    }
    if (lowLink.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

const graph = importGraph(sourceFiles);
const edges = [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })));

describe('the rooms of src/', () => {
  it('finds the imports it judges (so the rules below cannot pass by finding nothing)', () => {
    expect(sourceFiles.length).toBeGreaterThan(200);
    expect(edges).toContainEqual({ from: 'app.ts', to: 'plugins/http-errors.ts' });
    expect(importCircles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('places every file in a room of the table', () => {
    expect(sourceFiles.filter((file) => !rankOf.has(roomOf(file)))).toEqual([]);
  });

  it('has no import circle', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('has no import running back up: a room imports only its own files and the rooms below it', () => {
    const upward = edges.filter(({ from, to }) => rankOf.get(roomOf(to))! > rankOf.get(roomOf(from))!).map(({ from, to }) => `${from} → ${to}`);
    expect(upward).toEqual([]);
  });

  it('keeps plugins to hooks over infrastructure: no plugin imports a service, the receipts, a surface or an engine command', () => {
    const composing = edges
      .filter(({ from }) => roomOf(from) === 'plugins')
      .filter(({ to }) => ['services', 'receipts', 'surfaces', 'app.ts'].includes(roomOf(to)) || (roomOf(to) === 'engine' && !engineMechanisms.has(to)))
      .map(({ from, to }) => `${from} → ${to}`);
    expect(composing).toEqual([]);
  });

  it('lets only the CLI reach the SDK among the server rooms', () => {
    const reaching = edges.filter(({ from, to }) => roomOf(to) === 'sdk' && !['sdk', 'cli'].includes(roomOf(from))).map(({ from, to }) => `${from} → ${to}`);
    expect(reaching).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  const markdown = fs.readFileSync(path.join(projectRoot, 'docs/architecture.md'), 'utf8');
  /** The rows of the first table under a heading, as their cells, without its header row. */
  const tableUnder = (heading: string): string[][] => {
    const start = markdown.indexOf(`\n${heading}\n`);
    expect(start, heading).toBeGreaterThanOrEqual(0);
    const rows: string[][] = [];
    for (const line of markdown.slice(start + heading.length + 2).split('\n')) {
      if (line.startsWith('#') || (rows.length > 0 && !line.startsWith('|'))) break;
      if (!line.startsWith('|') || /^\|\s*-/.test(line)) continue;
      rows.push(line.split('|').slice(1, -1).map((cell) => cell.trim()));
    }
    return rows.slice(1);
  };
  /** The rooms a cell names in code spans: `signing/` as `signing`, `app.ts` as itself. */
  const roomsIn = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!.replace(/\/$/, ''));

  it('draws the layers exactly as this test holds them', () => {
    expect(tableUnder('### Layers').map(([, rooms]) => roomsIn(rooms!))).toEqual(layers.map((rooms) => [...rooms]));
  });

  it('names every folder and top-level file of src/ in its table of modules', () => {
    const named = tableUnder('## Modules').flatMap(([room]) => roomsIn(room!)).map((room) => room.replace(/^src\//, ''));
    expect([...new Set(sourceFiles.map(roomOf))].filter((room) => !named.includes(room)).sort()).toEqual([]);
    expect(named.filter((room) => !rankOf.has(room))).toEqual([]);
  });
});

describe('one Ed25519 signing helper', () => {
  const pkcs8SeedPrefixHex = '302e020100300506032b657004220420';
  const texts = sourceFiles.map((file) => ({ file, text: fs.readFileSync(path.join(srcDir, file), 'utf8') }));

  it('turns seeds into private keys and signs only in src/signing/ed25519.ts', () => {
    const signingByHand = texts
      .filter(({ file }) => file !== 'signing/ed25519.ts')
      .filter(({ text }) => /import\s*\{[^}]*\b(sign|createPrivateKey)\b[^}]*\}\s*from\s*'(node:)?crypto'/.test(text) || /\bcrypto\.(sign|createPrivateKey)\(/.test(text) || /\bsign\(null\b/.test(text))
      .map(({ file }) => file);
    expect(signingByHand).toEqual([]);
  });

  it('holds the PKCS#8 wrapping of a seed once', () => {
    expect(texts.filter(({ text }) => text.includes(pkcs8SeedPrefixHex)).map(({ file }) => file)).toEqual(['signing/ed25519.ts']);
  });
});
