// The SDK is client-side code: everything under src/sdk reaches, even transitively (type-only imports included), only
// the SDK itself, the route contracts (src/contracts/, with the limits and error catalogue they are built from), the
// pure signing core and the rails' pure wire facts: no server module, no server package. It checks every
// answer against its contract (src/sdk/answers.ts) instead of casting it.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const sdkDir = path.join(repoRoot, 'src/sdk');
const inSrc = (relative: string) => path.join(repoRoot, 'src', relative);
/** What an SDK file may import directly: its own folder, the contracts, the signing core, and the rails' pure wire facts
 * (each rail's `wire.ts`, the shape they share, and the list of built-in rails that names them). */
const importableFolders = ['sdk', 'contracts', 'signing'].map((folder) => inSrc(folder) + path.sep);
const railWireFiles = fs
  .readdirSync(inSrc('rails'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(inSrc('rails'), entry.name, 'wire.ts')))
  .map((entry) => inSrc(`rails/${entry.name}/wire.ts`));
const importableFiles = [inSrc('rails/wire-facts.ts'), inSrc('rails/built-in.ts'), ...railWireFiles];
/** What the SDK may reach besides: the modules the contracts and the signing core are built from. */
const reachableFiles = [...importableFiles, inSrc('limits.ts'), inSrc('errors/catalogue.ts')];
const forbiddenPackage = /^(fastify|fastify-plugin|@fastify\/.*|pg|pg-.*)$/;
const isReachable = (file: string) => importableFolders.some((folder) => file.startsWith(folder)) || reachableFiles.includes(file);

interface Reach {
  readonly files: Set<string>;
  readonly packages: Map<string, string>;
  readonly violations: string[];
}

/** The package name of a bare specifier (`@scope/name/sub` → `@scope/name`). */
const packageOf = (specifier: string) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);

/** Walks every import and re-export (static, dynamic, type-only) from the entry files, following relative ones. */
function reachableFrom(entries: string[]): Reach {
  const reach: Reach = { files: new Set(), packages: new Map(), violations: [] };
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (reach.files.has(file)) continue;
    reach.files.add(file);
    if (!isReachable(file)) reach.violations.push(path.relative(repoRoot, file));
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (specifier.startsWith('.')) {
        queue.push(path.resolve(path.dirname(file), specifier));
      } else if (!specifier.startsWith('node:')) {
        const name = packageOf(specifier);
        reach.packages.set(name, path.relative(repoRoot, file));
        if (forbiddenPackage.test(name)) reach.violations.push(`${name} (from ${path.relative(repoRoot, file)})`);
      }
    }
  }
  return reach;
}

const sdkFiles = fs.readdirSync(sdkDir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts')).map((name) => path.join(sdkDir, name));

describe('SDK import boundary', () => {
  it('reaches no server module and no server package', () => {
    const reach = reachableFrom(sdkFiles);
    expect(sdkFiles.length).toBeGreaterThan(5);
    expect(reach.violations).toEqual([]);
    // What the SDK does reach, so a new dependency is a visible change here: `typebox` for the contracts it checks
    // answers against, `@noble/hashes` for BLAKE3.
    expect([...reach.packages.keys()].sort()).toEqual(['@noble/hashes', 'typebox']);
  });

  it('imports only its own files, the contracts, the signing core and the sandbox credentials', () => {
    const outside: string[] = [];
    for (const file of sdkFiles) {
      for (const { fileName: specifier } of ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true).importedFiles) {
        if (!specifier.startsWith('.')) continue;
        const target = path.resolve(path.dirname(file), specifier);
        if (!importableFolders.some((folder) => target.startsWith(folder)) && !importableFiles.includes(target)) outside.push(`${path.relative(repoRoot, file)} → ${path.relative(repoRoot, target)}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('checks answers against the contracts instead of casting them: contract values load in answers.ts alone, and no cast goes through unknown', () => {
    const valueImporters = new Set<string>();
    const casts: string[] = [];
    for (const file of sdkFiles) {
      const text = fs.readFileSync(file, 'utf8');
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
      for (const statement of source.statements) {
        if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
        const specifier = statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier) ? statement.moduleSpecifier.text : undefined;
        if (specifier === undefined || !path.resolve(path.dirname(file), specifier).startsWith(inSrc('contracts') + path.sep)) continue;
        // `import type {…}` is erased; `import { type X }` is not (verbatimModuleSyntax keeps `import {}`, which loads the module).
        const typeOnly = ts.isImportDeclaration(statement) ? statement.importClause?.isTypeOnly === true : statement.isTypeOnly;
        if (!typeOnly) valueImporters.add(path.relative(repoRoot, file));
      }
      for (const [index, line] of text.split('\n').entries()) if (/\bas unknown as\b/.test(line)) casts.push(`${path.relative(repoRoot, file)}:${index + 1}`);
    }
    expect([...valueImporters]).toEqual(['src/sdk/answers.ts']);
    expect(casts).toEqual([]);
  });

  it('would catch a violation (the walker sees the server\'s own imports)', () => {
    const reach = reachableFrom([path.join(repoRoot, 'src/app.ts')]);
    expect(reach.violations.some((violation) => violation.startsWith('fastify'))).toBe(true);
    expect(reach.violations.some((violation) => violation.startsWith('src/plugins/'))).toBe(true);
  });

  it('is the package entry point `svc-settlement/sdk`: the built files for users, the sources inside this repository', async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    // The source condition comes first so that it wins wherever it is set (vitest.config.ts, tsconfig.json, the
    // example script); test/sdk/package-install.test.ts checks the built side from an installed tarball.
    expect(Object.entries(manifest.exports['./sdk'])).toEqual([
      ['svc-settlement-source', './src/sdk/index.ts'],
      ['types', './packages/sdk/dist/sdk/index.d.ts'],
      ['import', './packages/sdk/dist/sdk/index.js'],
      ['default', './packages/sdk/dist/sdk/index.js'],
    ]);
    const viaPackage = await import('svc-settlement/sdk');
    const direct = await import('../../src/sdk/index.ts');
    expect(viaPackage.SvcClient).toBe(direct.SvcClient);
  });

  it('is packed from packages/sdk, whose manifest declares what the SDK reaches and nothing of the server', () => {
    const root = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    const sdkPackage = JSON.parse(fs.readFileSync(path.join(repoRoot, 'packages/sdk/package.json'), 'utf8'));
    // The same name, version, licence and Node lines as the service it is the client of.
    for (const field of ['name', 'version', 'license', 'engines', 'private']) expect(sdkPackage[field], field).toEqual(root[field]);
    // Exactly the packages the SDK's import graph reaches, pinned as the service pins them.
    const reached = [...reachableFrom(sdkFiles).packages.keys()].sort();
    expect(Object.keys(sdkPackage.dependencies).sort()).toEqual(reached);
    for (const name of reached) expect(sdkPackage.dependencies[name], name).toBe(root.dependencies[name]);
    expect(sdkPackage.devDependencies).toBeUndefined();
    expect(sdkPackage.bin).toBeUndefined();
    // The package's subpath answers the files the build writes there (tsconfig.build.json).
    const built = (condition: string) => `./packages/sdk/${sdkPackage.exports['./sdk'][condition].replace(/^\.\//, '')}`;
    for (const condition of ['types', 'import', 'default']) expect(built(condition)).toBe(root.exports['./sdk'][condition]);
  });
});
