// Every route's access, checked two ways: the declared access of every registered route equals docs/roles.md,
// and a call with each role outside a route's list is refused with 403 before anything else happens.
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtAudiences, signGatewayJwt } from '../../../src/credentials/gateway-jwt.ts';
import { roles, type Role } from '../../../src/credentials/roles.ts';
import type { RouteAccess } from '../../../src/plugins/access.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

interface RegisteredRoute {
  readonly method: string;
  readonly path: string;
  readonly access: RouteAccess;
}

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;
const keys = {} as Record<Role, string>;
const registered: RegisteredRoute[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection, { beforeApp: (instance) => {
    instance.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        if (method !== 'HEAD') registered.push({ method, path: route.url, access: route.config!.access! });
      }
    });
  } });
  tenant = await createTestTenant(database.connection);
  for (const role of roles) keys[role] = await tenant.key(role);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function describeAccess(access: RouteAccess): string {
  if ('public' in access) return 'public';
  if ('download' in access) return `download token (${access.download})`;
  return `${access.roles.join(', ')}${access.scope ? `; scope ${access.scope}` : ''}`;
}

const documented = fs
  .readFileSync(new URL('../../../docs/roles.md', import.meta.url), 'utf8')
  .split('\n')
  .map((line) => /^\| (GET|POST|PUT|DELETE|PATCH) \| (\S+) \| (.+) \|$/.exec(line))
  .filter((match): match is RegExpExecArray => match !== null)
  .map(([, method, path, access]) => `${method} ${path} → ${access}`)
  .sort();

/** A path with every parameter filled by a syntactically valid id of nothing. */
const concretePath = (path: string) =>
  path
    .replace(':intent_id', '00000000-0000-4000-8000-000000000001')
    .replace(':decision_id', '00000000-0000-4000-8000-000000000002')
    .replace(':key_id', `key_${'0'.repeat(32)}`)
    .replace(':job_id', `job_${'0'.repeat(32)}`)
    .replace(':id', `rkey_${'0'.repeat(32)}`);

describe('route access', () => {
  it('docs/roles.md lists exactly the registered routes with their declared access', () => {
    const actual = registered.map((route) => `${route.method} ${route.path} → ${describeAccess(route.access)}`).sort();
    expect(actual).toEqual(documented);
  });

  it('refuses every role outside a route\'s list with 403, and lets the listed roles past the role check', async () => {
    for (const route of registered) {
      if ('public' in route.access) continue;
      if ('download' in route.access) {
        // A download route takes a download JWT only: no role's API key (nor a session token) gets past it.
        for (const role of roles) {
          const response = await app.inject({ method: route.method as 'POST', url: concretePath(route.path), headers: bearer(keys[role]) });
          expect(response.statusCode, `${route.method} ${route.path} as ${role}`).toBe(401);
        }
        const session = await signGatewayJwt(app.gatewayKeys, { roles: ['admin'] }, { audience: jwtAudiences.session, subject: 'user-x', tenantId: tenant.tenantId, expiresInSeconds: 300 });
        const response = await app.inject({ method: route.method as 'POST', url: concretePath(route.path), headers: bearer(session) });
        expect(response.statusCode, `${route.method} ${route.path} with a session token`).toBe(401);
        continue;
      }
      for (const role of roles) {
        const response = await app.inject({ method: route.method as 'GET', url: concretePath(route.path), headers: bearer(keys[role]), payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
        const label = `${route.method} ${route.path} as ${role}`;
        if (route.access.roles.includes(role)) {
          // The device-approval routes act for a person: every role may call them, but only with a session token.
          if (route.path.startsWith('/v1/auth/device/')) expect(response.json().error?.code, label).toBe('device_login.session_required');
          else expect([401, 403], label).not.toContain(response.statusCode);
        } else {
          expect(response.statusCode, label).toBe(403);
          expect(response.json().error.code, label).toBe('auth.role_insufficient');
        }
      }
    }
  });

  it('answers 401 without a credential on every protected route, and never 401 on a public one', async () => {
    for (const route of registered) {
      const response = await app.inject({ method: route.method as 'GET', url: concretePath(route.path), payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
      const label = `${route.method} ${route.path}`;
      if ('public' in route.access) expect(response.statusCode, label).not.toBe(401);
      else {
        expect(response.statusCode, label).toBe(401);
        expect(response.json().error.code, label).toBe('auth.credential_missing');
      }
    }
  });
});
