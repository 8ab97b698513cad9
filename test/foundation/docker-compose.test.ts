// No Docker engine runs here (nor in CI), so the image and the compose file are checked by reading them: the
// services, how they connect, that the image runs what the tests run, that its user can write its data folder,
// and that the signing keys outlive a re-created container.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const compose = parse(fs.readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'));
const dockerfile = fs.readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
const packageJson = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

/** The Dockerfile's instructions in order, continuation lines joined and comments dropped. */
const instructions: Array<{ keyword: string; argument: string }> = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
  .map((line) => {
    const [keyword, ...rest] = line.split(/\s+/);
    return { keyword: keyword!.toUpperCase(), argument: rest.join(' ') };
  });

/** The value an `ENV NAME=value` (or `ENV NAME value`) instruction gives, the last one winning. */
function imageEnvironment(name: string): string | undefined {
  let value: string | undefined;
  for (const { keyword, argument } of instructions) {
    if (keyword !== 'ENV') continue;
    for (const match of argument.matchAll(/(\w+)=(\S+)/g)) if (match[1] === name) value = match[2];
    const spaced = new RegExp(`^${name}\\s+(\\S+)$`).exec(argument);
    if (spaced) value = spaced[1];
  }
  return value;
}

/** Where the app keeps its data inside the container: the compose setting, else the image's, else ./data under WORKDIR. */
function appDataDirectory(): string {
  const workdir = instructions.filter((instruction) => instruction.keyword === 'WORKDIR').at(-1)?.argument ?? '/';
  const configured = compose.services.app.environment?.SVC_DATA_DIR ?? imageEnvironment('SVC_DATA_DIR') ?? 'data';
  return path.posix.resolve(workdir, configured);
}

describe('docker-compose.yml', () => {
  it('runs the app built from this repository next to postgres:16', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['app', 'postgres']);
    expect(compose.services.app.build).toBe('.');
    expect(compose.services.postgres.image).toBe('postgres:16');
  });

  it('wires DATABASE_URL to the postgres service with its credentials and database', () => {
    const { POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB } = compose.services.postgres.environment;
    const url = new URL(compose.services.app.environment.DATABASE_URL);
    expect(url.protocol).toBe('postgresql:');
    expect(url.hostname).toBe('postgres');
    expect(url.port).toBe('5432');
    expect(decodeURIComponent(url.username)).toBe(POSTGRES_USER);
    expect(decodeURIComponent(url.password)).toBe(POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${POSTGRES_DB}`);
  });

  it('publishes the app port the app listens on, on all interfaces inside the container', () => {
    const { PORT, HOST } = compose.services.app.environment;
    expect(HOST).toBe('0.0.0.0');
    expect(compose.services.app.ports).toContain(`${PORT}:${PORT}`);
  });

  it('has health checks, and starts the app only once postgres is healthy', () => {
    expect(compose.services.postgres.healthcheck.test.join(' ')).toContain('pg_isready');
    expect(compose.services.app.healthcheck.test.join(' ')).toContain('/readyz');
    expect(compose.services.app.depends_on.postgres.condition).toBe('service_healthy');
    expect(compose.volumes).toHaveProperty('postgres-data');
  });

  it('builds an image that starts src/server.ts with the migrations beside it', () => {
    expect(dockerfile).toContain('npm ci --omit=dev');
    expect(dockerfile).toContain('COPY migrations ./migrations');
    // The image runs the service exactly as `npm start` does, node flags included.
    const command = instructions.filter((instruction) => instruction.keyword === 'CMD').at(-1)!.argument;
    expect(JSON.parse(command)).toEqual(packageJson.scripts.start.split(' '));
    expect(JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).dependencies).toHaveProperty('tsx');
  });
});

describe('Dockerfile', () => {
  it('is based on a Node release line that is still maintained, and one that package.json engines says is tested', () => {
    const base = /^node:(\d+)-/.exec(instructions.find((instruction) => instruction.keyword === 'FROM')!.argument);
    expect(base).not.toBeNull();
    const line = Number(base![1]);
    // Node 20 reached its end of life in April 2026; 22 is maintained until April 2027 and 24 until April 2028.
    expect([22, 24]).toContain(line);
    expect(packageJson.engines.node).toContain(`^${line}.`);
  });

  it('runs as an unprivileged user that owns the data folder it writes', () => {
    const users = instructions.filter((instruction) => instruction.keyword === 'USER');
    expect(users.at(-1)?.argument).toBe('node');
    const dataDirectory = appDataDirectory();
    expect(dataDirectory).toBe('/app/data');
    // The folder is made and handed to `node` before the image switches to that user (a RUN after USER node could
    // not chown). Without it the server cannot create its signing key file and stops at start.
    const switchIndex = instructions.indexOf(users.at(-1)!);
    const preparing = instructions.slice(0, switchIndex).filter((instruction) => instruction.keyword === 'RUN');
    expect(preparing.some(({ argument }) => argument.includes(`mkdir -p ${dataDirectory}`))).toBe(true);
    expect(preparing.some(({ argument }) => new RegExp(`chown (-R )?node:node ${dataDirectory}(\\s|$)`).test(argument))).toBe(true);
  });
});

describe('docker-compose.yml keeps the gateway signing keys across container re-creation', () => {
  it('mounts a named volume on the folder where the key file is created (no key set is passed in)', () => {
    const environment = compose.services.app.environment ?? {};
    // With a key set passed in, the keys never live in the container; this compose file uses the data volume instead.
    expect(environment.SVC_SIGNING_KEYS).toBeUndefined();
    expect(environment.SVC_SIGNING_KEY_FILE).toBeUndefined();
    const mounts: string[] = compose.services.app.volumes ?? [];
    const mount = mounts.map((entry) => entry.split(':')).find(([, target]) => target === appDataDirectory());
    expect(mount, `a volume on ${appDataDirectory()}`).toBeDefined();
    // A named volume (declared below), not a bind mount of a host folder the container user may not be able to write.
    const [volumeName] = mount!;
    expect(volumeName).toMatch(/^[a-z][a-z0-9_-]*$/);
    expect(compose.volumes).toHaveProperty(volumeName!);
  });
});

