// The SDK as a package user gets it: `npm pack ./packages/sdk` (whose prepack builds its dist/), the tarball installed
// into an empty folder without the network, a plain .mjs lifecycle importing `svc-settlement/sdk` from there against
// a real server process, and a TypeScript consumer type-checked against the installed declarations. The package
// declares what its own files import and nothing of the server's. Slow (a build and an install).
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { projectRoot, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const consumerSources = path.join(projectRoot, 'test/sdk/package-consumer');
// Generous: the suite runs many files at once on a small machine, and this one builds, installs and compiles.
const stepTimeoutMs = 480_000;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to completion; answers its exit code and output whatever the code. */
function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, maxBuffer: 64 * 1024 * 1024, timeout: stepTimeoutMs }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

function expectSuccess(what: string, result: Run): Run {
  if (result.code !== 0) throw new Error(`${what} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

interface LockEntry {
  readonly version?: string;
  readonly integrity?: string;
  readonly name?: string;
  readonly dev?: boolean;
  readonly devOptional?: boolean;
  readonly link?: boolean;
  readonly [field: string]: unknown;
}

/** The lockfile entries `dependencies` need (theirs, optional and peer ones included, as npm installs them), found as
 * npm finds them: a package's own node_modules first, then each enclosing one up to the top. */
function lockClosure(lock: Record<string, LockEntry>, dependencies: Record<string, string>): string[] {
  const found = new Set<string>();
  const visit = (from: string, name: string, required: boolean) => {
    for (let base = from; ; base = base.slice(0, Math.max(0, base.lastIndexOf('/node_modules/')))) {
      const location = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
      const entry = lock[location];
      if (entry !== undefined) {
        if (found.has(location)) return;
        found.add(location);
        for (const child of Object.keys({ ...(entry['dependencies'] as object | undefined) })) visit(location, child, true);
        for (const child of Object.keys({ ...(entry['optionalDependencies'] as object | undefined), ...(entry['peerDependencies'] as object | undefined) })) visit(location, child, false);
        return;
      }
      if (base === '') {
        if (required) throw new Error(`${name} (needed by ${from || 'the SDK'}) is not in package-lock.json`);
        return;
      }
    }
  };
  for (const name of Object.keys(dependencies)) visit('', name, true);
  return [...found].sort();
}

/**
 * The consumer folder: a package.json that depends on the tarball, and a lockfile that pins the tarball's
 * dependencies (and theirs) to the versions this repository installed and tested (its own lockfile). With every
 * tarball address and integrity given, `npm ci --offline` takes each package from the npm cache the repository's
 * install filled, so the test needs no network and no registry metadata.
 */
function writeConsumerPackage(folder: string, tarball: string, manifest: PackedManifest, registry: string): void {
  const lock = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const tarballName = path.basename(tarball);
  const dependency = { [manifest.name]: `file:${tarballName}` };
  const integrity = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
  const packages: Record<string, unknown> = {
    '': { name: 'sdk-consumer', dependencies: dependency },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: `file:${tarballName}`,
      integrity,
      license: manifest.license,
      dependencies: manifest.dependencies,
      engines: manifest.engines,
    },
  };
  const registryBase = registry.endsWith('/') ? registry : `${registry}/`;
  for (const location of lockClosure(lock.packages, manifest.dependencies)) {
    const entry = lock.packages[location]!;
    if (entry.link || !entry.version || !entry.integrity) throw new Error(`${location}: not a registry package with an integrity; this test cannot pin it`);
    const name = entry.name ?? location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const { dev, devOptional, ...rest } = entry;
    packages[location] = { ...rest, resolved: `${registryBase}${name}/-/${name.split('/').pop()}-${entry.version}.tgz` };
  }
  fs.copyFileSync(tarball, path.join(folder, tarballName));
  fs.writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module', dependencies: dependency }, null, 2));
  fs.writeFileSync(path.join(folder, 'package-lock.json'), JSON.stringify({ name: 'sdk-consumer', lockfileVersion: 3, requires: true, packages }, null, 2));
}

interface PackedManifest {
  readonly name: string;
  readonly version: string;
  readonly license: string;
  readonly engines: Record<string, string>;
  readonly bin?: unknown;
  readonly dependencies: Record<string, string>;
}

let workFolder: string;
let consumerFolder: string;
let tarballFiles: string[];
let packedManifest: PackedManifest;
/** Every bare module specifier the packed JavaScript and declarations import, `node:` built-ins left out. */
let packedImports: Set<string>;
let database: TestDatabase;
let server: ServerProcess;
let apiKey: string;

/** Every package a file imports or re-exports, read as TypeScript reads it (so not from comments). */
function importedPackagesOf(text: string): string[] {
  const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((imported) => imported.fileName);
  return specifiers.filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
    .map((specifier) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!));
}

/** Packs the SDK package and installs the tarball into an empty folder. */
async function packAndInstall(): Promise<void> {
  const packFolder = path.join(workFolder, 'pack');
  fs.mkdirSync(packFolder);
  expectSuccess('npm pack', await run('npm', ['pack', './packages/sdk', '--pack-destination', packFolder], { cwd: projectRoot }));
  const tarballs = fs.readdirSync(packFolder).filter((name) => name.endsWith('.tgz'));
  expect(tarballs).toHaveLength(1);
  const tarball = path.join(packFolder, tarballs[0]!);
  tarballFiles = expectSuccess('tar', await run('tar', ['-tzf', tarball], { cwd: workFolder })).stdout.split('\n').filter(Boolean);
  const unpacked = path.join(workFolder, 'unpacked');
  fs.mkdirSync(unpacked);
  expectSuccess('tar', await run('tar', ['-xzf', tarball, '-C', unpacked], { cwd: workFolder }));
  packedManifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'package/package.json'), 'utf8')) as PackedManifest;
  packedImports = new Set(tarballFiles.filter((file) => /\.(js|d\.ts)$/.test(file)).flatMap((file) => importedPackagesOf(fs.readFileSync(path.join(unpacked, file), 'utf8'))));

  const registry = expectSuccess('npm config', await run('npm', ['config', 'get', 'registry'], { cwd: projectRoot })).stdout.trim();
  fs.mkdirSync(consumerFolder);
  writeConsumerPackage(consumerFolder, tarball, packedManifest, registry);
  // No install scripts: the SDK has none, and none of its dependencies' is needed to load it.
  expectSuccess('npm ci', await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: consumerFolder }));
}

async function startServer(): Promise<void> {
  database = await createTestDatabase();
  apiKey = (await createTestTenant(database.connection, 'sandbox', 'sdk-package')).adminKey;
  // Its start-up shares the machine with the build and the install, hence the long wait.
  server = await startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn' }, stepTimeoutMs);
}

beforeAll(async () => {
  workFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sdk-package-'));
  consumerFolder = path.join(workFolder, 'consumer');
  await Promise.all([packAndInstall(), startServer()]);
}, 2 * stepTimeoutMs);

afterAll(async () => {
  await server?.stop();
  await database?.drop();
  if (workFolder) fs.rmSync(workFolder, { recursive: true, force: true });
}, stepTimeoutMs);

describe('the SDK as an installed package', { timeout: stepTimeoutMs }, () => {
  it('ships the built SDK, its declarations, what it imports and its licence, and no TypeScript source', () => {
    for (const file of ['package/package.json', 'package/README.md', 'package/LICENSE', 'package/dist/sdk/index.js', 'package/dist/sdk/index.d.ts', 'package/dist/signing/index.js']) {
      expect(tarballFiles).toContain(file);
    }
    expect(tarballFiles.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    // Only the SDK's own import graph is built (tsconfig.build.json): no server layer is in the package.
    const serverFolders = ['infra', 'plugins', 'engine', 'db', 'services', 'surfaces', 'cli'];
    expect(tarballFiles.filter((file) => serverFolders.some((folder) => file.startsWith(`package/dist/${folder}/`)))).toEqual([]);
  });

  it('declares exactly the packages its files import, at the versions the service is tested with, and no command', () => {
    const rootManifest = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as PackedManifest;
    expect(packedImports.size).toBeGreaterThan(0);
    expect(Object.keys(packedManifest.dependencies).sort()).toEqual([...packedImports].sort());
    for (const [name, version] of Object.entries(packedManifest.dependencies)) expect(version, name).toBe(rootManifest.dependencies[name]);
    expect(packedManifest).toMatchObject({ name: rootManifest.name, version: rootManifest.version, license: rootManifest.license, engines: rootManifest.engines });
    expect(packedManifest.bin).toBeUndefined();
    // What the installation holds: the SDK, its dependencies and theirs; none of the server's.
    const installed = fs.readdirSync(path.join(consumerFolder, 'node_modules'), { withFileTypes: true }).filter((entry) => !entry.name.startsWith('.'))
      .flatMap((entry) => (entry.name.startsWith('@') ? fs.readdirSync(path.join(consumerFolder, 'node_modules', entry.name)).map((name) => `${entry.name}/${name}`) : [entry.name]));
    expect(installed.sort()).toEqual(['@noble/hashes', 'svc-settlement', 'typebox']);
  });

  it('runs a plain .mjs lifecycle from the installed package: create, fund, evidence, confirm → released', async () => {
    fs.copyFileSync(path.join(consumerSources, 'lifecycle.mjs'), path.join(consumerFolder, 'lifecycle.mjs'));
    const result = expectSuccess('node lifecycle.mjs', await run(process.execPath, ['lifecycle.mjs'], {
      cwd: consumerFolder,
      env: { SVC_API_KEY: apiKey, SVC_GATEWAY_URL: server.baseUrl, NODE_OPTIONS: undefined },
    }));
    const steps: Record<string, Record<string, unknown>> = Object.fromEntries(result.stdout.trim().split('\n').map((line) => {
      const { step, ...fields } = JSON.parse(line) as { step: string };
      return [step, fields];
    }));
    // The module came from the installed tarball's dist/, not from this repository's sources.
    const installed = fs.realpathSync(path.join(consumerFolder, 'node_modules/svc-settlement/dist/sdk/index.js'));
    expect(fs.realpathSync(new URL(String(steps['resolved']?.['url'])))).toBe(installed);
    expect(steps).toMatchObject({
      opened: { tenant: 'sdk-package', environment: 'sandbox' },
      created: { state: 'open', signing_version: 6 },
      funded: { state: 'funded', funding: 'authorization_succeeded', capability_token: 'string' },
      evidence: { state: 'evidence_recorded', predicate_passed: true },
      confirmed: { state: 'released', action: 'release', reason: 'predicate_passed' },
      ledger: { ok: true, problems: [] },
    });
    expect(steps['ledger']?.['rows']).toBeGreaterThan(0);
  });

  it('type-checks a TypeScript consumer against the installed declarations', async () => {
    fs.copyFileSync(path.join(consumerSources, 'consumer.ts'), path.join(consumerFolder, 'consumer.ts'));
    // A user's strict configuration without this repository's settings (no .ts imports, no source condition).
    // skipLibCheck as most projects set it (checking typebox's and Node's declarations costs minutes on a busy
    // machine); a declaration that failed to resolve would turn a type into `any`, which the `@ts-expect-error`
    // lines of consumer.ts catch. Node's types come from this repository's install.
    const compilerOptions = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      typeRoots: [path.join(projectRoot, 'node_modules/@types')],
      types: ['node'],
    };
    fs.writeFileSync(path.join(consumerFolder, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }, null, 2));
    const tsc = path.join(projectRoot, 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--listFiles'], { cwd: consumerFolder });
    expect(checked.code, checked.stdout).toBe(0);
    // The SDK's types were read from the installed declarations.
    const listed = checked.stdout.split('\n').map((file) => file.trim());
    expect(listed.some((file) => file.endsWith('node_modules/svc-settlement/dist/sdk/index.d.ts'))).toBe(true);
    expect(listed.some((file) => file.endsWith('node_modules/svc-settlement/dist/contracts/intents.d.ts'))).toBe(true);
    expect(listed.some((file) => file.includes('/src/sdk/'))).toBe(false);
    // consumer.ts's `@ts-expect-error` lines would fail this same run if a type had degraded to `any`.
  });
});
