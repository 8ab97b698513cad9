// The drill's load: clients that each run intents through create → fund → evidence → confirm with the project's own
// SDK, through the proxy in front of the replicas. Every mutation carries an idempotency key fixed for the intent and
// step; the SDK retries it by its rules (docs/sdk.md "Retries"), and when the SDK gives up the client calls again with
// the same keys, as docs/sdk.md tells a caller to, until the mutation is acknowledged or its deadline passes.
import { randomUUID } from 'node:crypto';
import {
  generateKey,
  isRetryableError,
  sandboxCredential,
  SvcClient,
  SvcIdempotencyError,
  type SvcSigningKey,
} from '../../../src/sdk/index.ts';
import type { FetchFunction } from '../../../src/sdk/transport.ts';

export const steps = ['create', 'fund', 'evidence', 'confirm'] as const;
export type Step = (typeof steps)[number];

/** One answer a client received (status 0: none came), at wall-clock `atMs`, to a request sent at `sentAtMs`. */
export interface AnswerRecord {
  readonly sentAtMs: number;
  readonly atMs: number;
  /** An engine mutation's request (a POST under /harbor/intents). */
  readonly mutation: boolean;
  readonly status: number;
  readonly retryAfter: boolean;
  /** What the report quotes of a 5xx or a missing answer: method, path, code, request id. */
  readonly summary: string;
}

export interface Acknowledgement {
  readonly tenantId: string;
  readonly intentId: string;
  readonly step: Step;
  readonly atMs: number;
  /** From the first attempt to the acknowledgement, every retry included. */
  readonly tookMs: number;
}

/** A mutation that never got its acknowledgement: refused for good, or still failing at its deadline. */
export interface Unacknowledged {
  readonly tenantId: string;
  readonly intentId: string;
  readonly step: Step;
  readonly description: string;
}

export interface DrillTenant {
  readonly tenantId: string;
  readonly apiKey: string;
}

/** The release rule and evidence of every drill intent: the evidence passes, so confirm releases. */
const evidenceSchema = { type: 'object', properties: { status: { type: 'string' }, cost_cents: { type: 'integer' } } };
const predicate = {
  version: 1,
  root: { op: 'and', clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }] },
};

/** Notes every answer (or its absence) the SDK gets, then hands it on unchanged. */
export function recordingFetch(answers: AnswerRecord[]): FetchFunction {
  return async (input, init) => {
    const route = `${init.method ?? 'GET'} ${new URL(input).pathname.replace(/[0-9a-f-]{36}/g, ':id')}`;
    const mutation = route.startsWith('POST /harbor/intents');
    const sentAtMs = Date.now();
    try {
      const response = await fetch(input, init);
      let summary = route;
      if (response.status >= 500) {
        const text = await response.clone().text();
        const code = /"code":"([^"]+)"/.exec(text)?.[1] ?? text.replace(/\s+/g, ' ').slice(0, 80);
        summary = `${response.status} ${route} ${code} ${response.headers.get('x-request-id') ?? ''}`.trim();
      }
      answers.push({ sentAtMs, atMs: Date.now(), mutation, status: response.status, retryAfter: response.headers.has('retry-after'), summary });
      return response;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      answers.push({ sentAtMs, atMs: Date.now(), mutation, status: 0, retryAfter: false, summary: `no answer: ${route} ${cause?.code ?? cause?.message ?? (error as Error).message}` });
      throw error;
    }
  };
}

interface TenantClient {
  readonly tenantId: string;
  readonly client: SvcClient;
  readonly principal: SvcSigningKey;
  readonly payee: SvcSigningKey;
}

export class LifecycleLoad {
  /** Every answer the clients received, in arrival order. */
  readonly answers: AnswerRecord[] = [];
  readonly acknowledgements: Acknowledgement[] = [];
  /** Mutations still failing at their deadline, and mutations refused for good. */
  readonly abandoned: Unacknowledged[] = [];
  readonly refused: Unacknowledged[] = [];
  lifecyclesCompleted = 0;
  readonly #tenants: TenantClient[] = [];
  readonly #mutationDeadlineMs: number;
  #stopping = false;
  #workers: Promise<void>[] = [];

  private constructor(mutationDeadlineMs: number) {
    this.#mutationDeadlineMs = mutationDeadlineMs;
  }

  /** Opens an SDK client per tenant and starts `clients` workers, spread over the tenants. */
  static async start(options: { baseUrl: string; tenants: readonly DrillTenant[]; clients: number; mutationDeadlineMs: number }): Promise<LifecycleLoad> {
    const load = new LifecycleLoad(options.mutationDeadlineMs);
    for (const tenant of options.tenants) {
      const client = await SvcClient.open({ apiKey: tenant.apiKey, gatewayBaseUrl: options.baseUrl, expectedEnvironment: 'sandbox', fetch: recordingFetch(load.answers) });
      load.#tenants.push({ tenantId: tenant.tenantId, client, principal: generateKey().key, payee: generateKey().key });
    }
    load.#workers = Array.from({ length: options.clients }, (_, index) => load.#worker(load.#tenants[index % load.#tenants.length]!));
    return load;
  }

  /** Starts no new intent; waits for each worker's intent in flight to be acknowledged or abandoned. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#workers);
  }

  async #worker(tenant: TenantClient): Promise<void> {
    while (!this.#stopping) {
      if (await this.#lifecycle(tenant)) this.lifecyclesCompleted += 1;
    }
  }

  /** One intent, all four mutations; false when one of them was abandoned or refused. */
  async #lifecycle(tenant: TenantClient): Promise<boolean> {
    const intentId = randomUUID();
    const calls = intentCalls(tenant, intentId, new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000));
    for (const step of steps) {
      if (!(await this.#untilAcknowledged(tenant.tenantId, intentId, step, calls[step]))) return false;
    }
    return true;
  }

  /**
   * Creates and funds one intent per tenant whose deadline passes `secondsAhead` from now, and leaves it there: the
   * maintenance sweeper must refund each, whichever replica holds its lock at the time. Answers the intents funded.
   */
  async fundExpiring(secondsAhead: number): Promise<{ tenantId: string; intentId: string; deadlineMs: number }[]> {
    const deadline = new Date(Math.ceil(Date.now() / 1000) * 1000 + secondsAhead * 1000);
    const funded = await Promise.all(this.#tenants.map(async (tenant) => {
      const intentId = randomUUID();
      const calls = intentCalls(tenant, intentId, deadline);
      const done = (await this.#untilAcknowledged(tenant.tenantId, intentId, 'create', calls.create)) &&
        (await this.#untilAcknowledged(tenant.tenantId, intentId, 'fund', calls.fund));
      return done ? { tenantId: tenant.tenantId, intentId, deadlineMs: deadline.getTime() } : undefined;
    }));
    return funded.filter((intent) => intent !== undefined);
  }

  /** Calls `call` until it is acknowledged, retrying what a retry can change; false if it never was. */
  async #untilAcknowledged(tenantId: string, intentId: string, step: Step, call: () => Promise<unknown>): Promise<boolean> {
    const startedMs = Date.now();
    for (;;) {
      try {
        await call();
        this.acknowledgements.push({ tenantId, intentId, step, atMs: Date.now(), tookMs: Date.now() - startedMs });
        return true;
      } catch (error) {
        if (!isWorthRetrying(error)) {
          this.refused.push({ tenantId, intentId, step, description: describeError(error) });
          return false;
        }
        if (Date.now() - startedMs > this.#mutationDeadlineMs) {
          this.abandoned.push({ tenantId, intentId, step, description: `${describeError(error)} (after ${((Date.now() - startedMs) / 1000).toFixed(0)} s)` });
          return false;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
}

/**
 * The four mutations of one intent as SDK calls, each under an idempotency key fixed for the intent and step. The
 * deadline and the evidence's time are fixed too, so that a call repeated after the SDK gave up sends the same bytes.
 */
function intentCalls(tenant: TenantClient, intentId: string, deadline: Date): Record<Step, () => Promise<unknown>> {
  const key = (step: Step) => `drill-${intentId}-${step}`;
  const submittedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
  const { client } = tenant;
  return {
    create: () =>
      client.intents.create({
        intentId, idempotencyKey: key('create'), principal: { did: 'did:example:drill-principal', key: tenant.principal },
        payee: { did: 'did:example:drill-payee', publicKey: tenant.payee }, amountCents: 250, deadline, settlementRail: 'x402_usdc_base',
        allowedTools: ['search.web'], evidenceSchema, predicate,
      }),
    fund: () => client.intents.fund(intentId, { credential: sandboxCredential(), idempotencyKey: key('fund') }),
    evidence: () =>
      client.intents.submitEvidence(intentId, {
        payee: { did: 'did:example:drill-payee', key: tenant.payee }, payload: { status: 'completed', cost_cents: 120 }, submittedAt,
        idempotencyKey: key('evidence'),
      }),
    confirm: () => client.intents.confirm(intentId, { expectedAction: 'release', idempotencyKey: key('confirm') }),
  };
}

/** What the SDK retries itself (no answer, 429, 5xx), and a 409 saying the key's first request still runs. */
function isWorthRetrying(error: unknown): boolean {
  return isRetryableError(error) || (error instanceof SvcIdempotencyError && error.code === 'idempotency.request_in_progress');
}

function describeError(error: unknown): string {
  const facts = error as { status_code?: number; code?: string; request_id?: string; message?: string; name?: string };
  if (facts.status_code !== undefined) return `${facts.status_code} ${facts.code ?? ''} ${facts.request_id ?? ''}`.trim();
  return `${facts.name ?? 'Error'}: ${facts.message ?? String(error)}`;
}
