// What a refusal echoes of the request stays small and exact: the JSON pointers in `details.fields[].path` of a
// schema violation are cut as the boundary's own `details.path` is (a 500 KB key does not make a 500 KB answer), and
// keys holding "/" or "~" are escaped as RFC 6901 says.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputPointerLengthMax } from '../../src/limits.ts';
import { validationFields } from '../../src/infra/validation.ts';
import { bearer, buildTestApp, createTestTenant, type TestTenant } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: FastifyInstance;
let tenant: TestTenant;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.connection);
  tenant = await createTestTenant(database.connection);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('details.fields[].path', () => {
  it('cuts the pointer to an unknown key of 500 KB, as details.path is cut', async () => {
    const key = 'k'.repeat(500_000);
    const response = await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: { ...bearer(tenant.adminKey), 'content-type': 'application/json' }, payload: JSON.stringify({ role: 'agent', [key]: 1 }) });
    expect(response.statusCode).toBe(400);
    expect(response.body.length).toBeLessThan(4 * 1024);
    const [field] = response.json().error.details.fields as { path: string }[];
    expect(field!.path).toBe(`/${key.slice(0, inputPointerLengthMax - 1)}…`);
  });

  it('cuts every pointer of many, so the answer stays small', async () => {
    const keys = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`${index}`.padEnd(20_000, 'x'), 1]));
    const response = await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: { ...bearer(tenant.adminKey), 'content-type': 'application/json' }, payload: JSON.stringify({ role: 'agent', ...keys }) });
    expect(response.statusCode).toBe(400);
    expect(response.body.length).toBeLessThan(32 * 1024);
  });

  it('escapes "/" and "~" in a key it points at', () => {
    const fields = validationFields([{ instancePath: '/a~1b', message: 'must NOT have additional properties', params: { additionalProperty: 'c/d~e' } }], 'body');
    expect(fields).toEqual([{ location: 'body', path: '/a~1b/c~1d~0e', message: 'must NOT have additional properties' }]);
  });
});
