// A console session for tests that speak HTTP to the console without a browser: a person made a member of the
// tenant, signed in through the public sign-in routes with the code read from the local outbox, and the cookies a
// browser would then send (the session JWT and a CSRF token of its own).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Role } from '../../src/credentials/roles.ts';
import { Database } from '../../src/infra/database.ts';
import { takeOutboxCode } from '../../src/services/sign-in-service.ts';
import { createUser } from '../../src/services/user-service.ts';

export interface ConsoleSession {
  /** The Cookie header of a signed-in browser. */
  readonly cookie: string;
  /** The CSRF token its forms carry (the `csrf_token` field or the `x-csrf-token` header). */
  readonly csrfToken: string;
}

let sessionCounter = 0;

/** A CSRF token and its cookie, as the console mints them for a browser that has none. */
export function csrfCookie(): ConsoleSession {
  const csrfToken = randomBytes(32).toString('base64url');
  return { cookie: `svc_console_csrf=${csrfToken}`, csrfToken };
}

export async function consoleSession(app: FastifyInstance, connection: pg.PoolConfig, tenantId: string, role: Role): Promise<ConsoleSession> {
  const email = `console.${process.pid}.${++sessionCounter}@example.com`;
  const system = new Database({ ...connection, max: 1 });
  try {
    await createUser(system, { tenantId, email, role });
    const started = await app.inject({ method: 'POST', url: '/v1/public/auth/login/start', payload: { email } });
    if (started.statusCode !== 200) throw new Error(`login/start answered ${started.statusCode}: ${started.body}`);
    const code = (await takeOutboxCode(system, email))!.code;
    const verified = await app.inject({ method: 'POST', url: '/v1/public/auth/challenges/verify', payload: { challenge_id: started.json().challenge_id, code } });
    if (verified.statusCode !== 200) throw new Error(`challenges/verify answered ${verified.statusCode}: ${verified.body}`);
    const csrf = csrfCookie();
    return { cookie: `svc_console_session=${verified.json().access_token as string}; ${csrf.cookie}`, csrfToken: csrf.csrfToken };
  } finally {
    await system.close();
  }
}
