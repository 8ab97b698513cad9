// Every package package.json declares is imported somewhere in the repository: a dependency nothing uses is code
// shipped, installed and audited for nothing (and a reader takes it for one that is used).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../helpers/server-process.ts';

const packageJson = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};

const sourceFolders = ['src', 'test', 'bench', 'examples', 'bin'];

function sourceFiles(folder: string): string[] {
  const absolute = path.join(projectRoot, folder);
  if (!fs.existsSync(absolute)) return [];
  return fs.readdirSync(absolute, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|js|mjs|cjs)$/.test(file))
    .map((file) => path.join(absolute, file));
}

/** The package a module specifier names: `@scope/name` or `name`, without a subpath. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Every package named by an import, a dynamic import, a require (also `createRequire(…)('x')`) or a `--import` loader. */
function importedPackages(): Set<string> {
  const pattern = /(?:(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*|\)\s*\(\s*)['"]|--import[\s=]+['"]?)([@a-z][\w@./-]*)/g;
  const texts = sourceFolders.flatMap(sourceFiles).map((file) => fs.readFileSync(file, 'utf8'));
  texts.push(Object.values(packageJson.scripts).join('\n'));
  const packages = new Set<string>();
  for (const text of texts) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1]!;
      if (specifier.startsWith('node:')) packages.add('node');
      else packages.add(packageOf(specifier));
    }
  }
  return packages;
}

describe('declared dependencies', () => {
  const imported = importedPackages();

  it('finds the imports it looks for (so the check below cannot pass by finding nothing)', () => {
    for (const known of ['fastify', 'pg', 'vitest', 'tsx', 'node']) expect(imported).toContain(known);
  });

  it.each([...Object.keys(packageJson.dependencies), ...Object.keys(packageJson.devDependencies)])('%s is imported somewhere', (name) => {
    // A type package counts as used when the package it types is imported (`@types/node`: any `node:` module).
    const typed = /^@types\/(.+)$/.exec(name)?.[1];
    expect(imported, `${name} is declared in package.json but nothing in ${sourceFolders.join(', ')} imports it`).toContain(typed ?? name);
  });

  it('runtime dependencies are imported by what runs in production (src, bin), not only by tests or benches', () => {
    const runtimeTexts = ['src', 'bin'].flatMap(sourceFiles).map((file) => fs.readFileSync(file, 'utf8')).join('\n');
    const runtimeImported = new Set([...runtimeTexts.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"]([@a-z][\w@./-]*)['"]/g)].map((match) => packageOf(match[1]!)));
    for (const name of Object.keys(packageJson.dependencies)) {
      expect(runtimeImported, `${name} is a runtime dependency that src/ and bin/ never import (a devDependency?)`).toContain(name);
    }
  });
});
