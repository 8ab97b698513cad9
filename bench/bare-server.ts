// The baseline server of the principal bench: a bare Fastify 5 route answering a JSON object of the same size,
// with the same logger level and no database.
import Fastify from 'fastify';

const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn' } });
const body = {
  tenant_id: 'bench', tenant_uuid: '00000000-0000-4000-8000-000000000000', environment: 'sandbox',
  service_account_role: 'agent', roles: ['agent'], key_kind: 'standard', mcp_scopes: [], subject: 'key_00000000000000000000000000000000',
};
app.get('/v1/auth/principal', async () => body);
app.get('/healthz', async () => ({ status: 'ok' }));
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`listening at ${address}`);
