// No Docker engine runs here, so the compose file is checked by reading it: the services, how they connect, and
// that the image runs what the tests run.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const compose = parse(fs.readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'));
const dockerfile = fs.readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');

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
    expect(dockerfile).toMatch(/^FROM node:20/m);
    expect(dockerfile).toContain('npm ci --omit=dev');
    expect(dockerfile).toContain('COPY migrations ./migrations');
    expect(dockerfile).toMatch(/CMD \["node", "--import", "tsx", "src\/server\.ts"\]/);
    expect(JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).dependencies).toHaveProperty('tsx');
  });
});
