// The response validator the suite runs with (AppOptions.validateResponses): a route whose answer drifts from its
// declared contract (an undeclared status, a missing member, an extra member, a wrong type) fails loudly with a 500
// naming the drift, instead of reaching the client trimmed or coerced by the serializer.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app as serviceApp } from '../../src/app.ts';
import { OpenObject, publicErrors } from '../../src/contracts/common.ts';
import { ephemeralKeyring } from '../../src/infra/gateway-keys.ts';
import { createLogger } from '../../src/infra/logging.ts';
import { createFastify } from '../../src/server-options.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const Widget = Type.Object({ id: Type.String(), count: Type.Integer(), tags: Type.Array(Type.String()), extra: OpenObject() });

/** One route per kind of drift; `?as=` picks what the handler sends. */
async function driftingRoutes(app: FastifyInstance): Promise<void> {
  const sent: Record<string, { status: number; body: unknown }> = {
    good: { status: 200, body: { id: 'w1', count: 2, tags: ['a'], extra: { anything: [1, { deep: true }] } } },
    missing: { status: 200, body: { id: 'w1', tags: [], extra: {} } },
    extra: { status: 200, body: { id: 'w1', count: 2, tags: [], extra: {}, secret: 'must not leak' } },
    wrong_type: { status: 200, body: { id: 'w1', count: '2', tags: [], extra: {} } },
    undeclared_status: { status: 202, body: { id: 'w1', count: 2, tags: [], extra: {} } },
    bad_envelope: { status: 400, body: { error: { code: 'not.a.catalogue.code', message: 'x' }, request_id: 'r' } },
  };
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/drift',
    {
      config: { access: { public: true } },
      schema: { querystring: Type.Object({ as: Type.String() }), response: { 200: Widget, ...publicErrors() } },
    },
    async (request, reply) => {
      const answer = sent[request.query.as]!;
      return reply.code(answer.status as 200).send(answer.body as never);
    },
  );
}

let database: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  app = createFastify(createLogger('silent'));
  await app.register(serviceApp, { connection: database.connection, gatewayKeys: ephemeralKeyring(), maintenance: false, validateResponses: true });
  await app.register(driftingRoutes);
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const drift = async (as: string) => {
  const answer = await app.inject({ method: 'GET', url: `/drift?as=${as}` });
  return { status: answer.statusCode, body: answer.json() as { error?: { code: string; details?: { response_drift?: { status: number; problem?: string; errors?: { path: string; message: string }[] } } } } };
};

describe('response validation', () => {
  it('lets an answer that matches its contract through, open members included', async () => {
    const answer = await drift('good');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ id: 'w1', count: 2, tags: ['a'], extra: { anything: [1, { deep: true }] } });
  });

  it.each([
    ['missing', "must have required property 'count'"],
    ['extra', 'must NOT have additional properties'],
    ['wrong_type', 'must be integer'],
  ])('refuses an answer with a %s member: 500 naming the drift', async (as, message) => {
    const answer = await drift(as);
    expect(answer.status).toBe(500);
    expect(answer.body.error?.code).toBe('internal.error');
    expect(answer.body.error?.details?.response_drift?.errors?.map((error) => error.message)).toContain(message);
    expect(JSON.stringify(answer.body)).not.toContain('must not leak');
  });

  it('refuses a status the route does not declare', async () => {
    const answer = await drift('undeclared_status');
    expect(answer.status).toBe(500);
    expect(answer.body.error?.details?.response_drift?.problem).toContain('no JSON response for status 202');
  });

  it('refuses an error envelope whose code is not a catalogue code of its status', async () => {
    const answer = await drift('bad_envelope');
    expect(answer.status).toBe(500);
    expect(answer.body.error?.details?.response_drift?.errors?.[0]?.path).toBe('/error/code');
  });

  it('checks the envelopes of requests no route takes (404) and the route errors the app raises (400)', async () => {
    expect((await app.inject({ method: 'GET', url: '/no/such/route' })).statusCode).toBe(404);
    const refused = await app.inject({ method: 'GET', url: '/drift' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('request.invalid');
  });

  it('is off unless asked for: production serializes through the schema, which drops the member', async () => {
    const plain = createFastify(createLogger('silent'));
    await plain.register(serviceApp, { connection: database.connection, gatewayKeys: ephemeralKeyring(), maintenance: false });
    await plain.register(driftingRoutes);
    try {
      const answer = await plain.inject({ method: 'GET', url: '/drift?as=extra' });
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toEqual({ id: 'w1', count: 2, tags: [], extra: {} });
    } finally {
      await plain.close();
    }
  });
});
