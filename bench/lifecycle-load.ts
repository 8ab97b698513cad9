// The lifecycle bench's load generator, run in the bench process (a second process to the service, on loopback):
// in a closed loop, clients that each loop create → fund (402) → fund (credential) → evidence → confirm over
// keep-alive HTTP; in an open loop, intents started on a schedule whatever is in flight, each create timed from its
// scheduled start (so that a stall cannot hide behind the requests it delayed).
//
// Every create and evidence body is signed before the timed window (Ed25519 + BLAKE3 would otherwise compete with
// the service for the two cores); only the x402 credential, a base64 JSON built from the 402's challenge, is made
// inside it. Four engine mutations per intent: the fund mutation is the 402 round trip plus the paid one, timed
// from the first request's send to the second's answer.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../src/rails/x402/wire.ts';
import { party, signedCreateBody, signedEvidenceBody, type Party } from '../test/helpers/intents.ts';

export const mutations = ['create', 'fund', 'evidence', 'confirm'] as const;
export type Mutation = (typeof mutations)[number];
/** The HTTP requests of one lifecycle, in order: the fund mutation is two of them. */
export const requestSteps = ['create', 'fund (402)', 'fund (paid)', 'evidence', 'confirm'] as const;
export type RequestStep = (typeof requestSteps)[number];

export interface PreparedIntent {
  /** `Bearer <admin key>` of the intent's tenant. */
  readonly authorization: string;
  readonly intentId: string;
  readonly createBody: string;
  readonly evidenceBody: string;
}

export interface BenchTenant {
  readonly tenantId: string;
  readonly apiKey: string;
}

/** Signs intents of one principal to one payee, ahead of the window that spends them; with several tenants,
 * round-robin over them. */
/** A policy version intents are bound to, as signedCreateBody takes it. */
export interface BenchPolicy { templateId: string; versionSeq: number; contentDigestHex: string; materializedPredicate: Record<string, unknown> }

export class IntentFactory {
  readonly #tenants: readonly BenchTenant[];
  readonly #principal: Party = party('did:principal:bench');
  readonly #payee: Party = party('did:payee:bench');
  #next = 0;

  readonly #policy: BenchPolicy | undefined;

  /** With `policy`, each intent is bound (v7) to that policy version: the split bench binds one side to a metered
   * version (the evidence's 120 cents of 500 then settle as a split) and the other to a full one. */
  constructor(tenants: readonly BenchTenant[], policy?: BenchPolicy) {
    this.#tenants = tenants;
    this.#policy = policy;
  }

  prepare(count: number): PreparedIntent[] {
    const prepared: PreparedIntent[] = [];
    for (let index = 0; index < count; index += 1) {
      const { tenantId, apiKey } = this.#tenants[this.#next++ % this.#tenants.length]!;
      const create = signedCreateBody({ tenantId, principal: this.#principal, payee: this.#payee, ...(this.#policy ? { policy: this.#policy } : {}) });
      const intentId = create['intent_id'] as string;
      const evidence = signedEvidenceBody({ tenantId, intentId, payee: this.#payee, payload: { status: 'completed', cost_cents: 120 } });
      prepared.push({ authorization: `Bearer ${apiKey}`, intentId, createBody: JSON.stringify(create), evidenceBody: JSON.stringify(evidence) });
    }
    return prepared;
  }
}

/** Signed intents not yet spent: topped up between windows (never inside one), carried over from one to the next. */
export class IntentPool {
  readonly #factory: IntentFactory;
  #queue: PreparedIntent[] = [];
  #head = 0;

  constructor(factory: IntentFactory) {
    this.#factory = factory;
  }

  get size(): number {
    return this.#queue.length - this.#head;
  }

  /** Signs until at least `count` are ready. */
  ensure(count: number): void {
    const missing = count - this.size;
    if (missing <= 0) return;
    this.#queue = [...this.#queue.slice(this.#head), ...this.#factory.prepare(missing)];
    this.#head = 0;
  }

  take(): PreparedIntent | undefined {
    return this.#head < this.#queue.length ? this.#queue[this.#head++] : undefined;
  }
}

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** POSTs to the service over at most `connections` keep-alive sockets. */
export class EngineClient {
  readonly #agent: http.Agent;
  readonly #host: string;
  readonly #port: number;

  constructor(baseUrl: string, connections: number) {
    const url = new URL(baseUrl);
    this.#host = url.hostname;
    this.#port = Number(url.port);
    this.#agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  }

  /** Rejects only when no answer came (a refused or reset connection); an error status is an answer. */
  post(authorization: string, path: string, body: string, extraHeaders: Record<string, string> = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          agent: this.#agent,
          host: this.#host,
          port: this.#port,
          method: 'POST',
          path,
          headers: {
            authorization,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            ...extraHeaders,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** What one bounded run measured. Latencies in milliseconds, of mutations completed inside the window. */
export interface LoadSample {
  readonly seconds: number;
  /** Mutations completed inside the window. */
  readonly completed: number;
  /** Mutations completed at all, those that ended after the window included: what the service did meanwhile. */
  readonly finished: number;
  readonly mutationsPerSecond: number;
  readonly latencies: Record<Mutation, number[]>;
  /** Every HTTP request on its own (the fund mutation is two of them). */
  readonly requestLatencies: number[];
  readonly intentsStarted: number;
  /** True when the run wanted more prepared intents than it was given. */
  readonly exhausted: boolean;
  readonly errors: string[];
}

export class Recorder {
  readonly latencies: Record<Mutation, number[]> = { create: [], fund: [], evidence: [], confirm: [] };
  readonly requestLatencies: number[] = [];
  readonly errors: string[] = [];
  completed = 0;
  finished = 0;
  intentsStarted = 0;
  exhausted = false;

  constructor(readonly windowEnd: number) {}

  /** Records a mutation that finished at `end`, if that is inside the window. */
  mutation(kind: Mutation, start: number, end: number, requestStarts: readonly number[]): void {
    this.finished += 1;
    if (end > this.windowEnd) return;
    this.completed += 1;
    this.latencies[kind].push(end - start);
    // The fund mutation's two requests: the 402 ends where the paid request starts (the credential is µs).
    for (let index = 0; index < requestStarts.length; index += 1) {
      this.requestLatencies.push((requestStarts[index + 1] ?? end) - requestStarts[index]!);
    }
  }

  sample(seconds: number): LoadSample {
    return {
      seconds,
      completed: this.completed,
      finished: this.finished,
      mutationsPerSecond: this.completed / seconds,
      latencies: this.latencies,
      requestLatencies: this.requestLatencies,
      intentsStarted: this.intentsStarted,
      exhausted: this.exhausted,
      errors: this.errors,
    };
  }
}

/** Called before each request of a lifecycle and once after its last: the counting phase takes its readings here. */
export type StepHook = (step: RequestStep | 'done') => Promise<void>;

/**
 * Runs one intent through its four mutations, stopping before any that would start after the window. The create's
 * latency runs from `scheduledAt` when given (an open loop's schedule: a late timer or a queue in front of the
 * sockets counts against the service, as pgbench -R counts its schedule lag); each later mutation is sent the moment
 * the one before it is answered, so its own send time is its schedule. A request that gets no answer (connection
 * refused or reset) is recorded as an error like a wrong status, never thrown.
 */
export async function lifecycle(client: EngineClient, intent: PreparedIntent, recorder: Recorder, scheduledAt?: number, hook?: StepHook): Promise<void> {
  const base = `/harbor/intents/${intent.intentId}`;
  const fail = (step: string, answer: Answer) => {
    recorder.errors.push(`${step} ${intent.intentId}: ${answer.status} ${answer.body.slice(0, 300)}`);
  };
  const post = async (step: RequestStep, path: string, body: string, headers?: Record<string, string>): Promise<Answer> => {
    if (hook) await hook(step);
    return client.post(intent.authorization, path, body, headers).catch((error: Error) => ({ status: 0, headers: {}, body: `no answer: ${describeFailure(error)}` }));
  };
  recorder.intentsStarted += 1;

  let start = scheduledAt ?? performance.now();
  const created = await post('create', '/harbor/intents', intent.createBody);
  let end = performance.now();
  if (created.status !== 201) return fail('create', created);
  recorder.mutation('create', start, end, [start]);

  if (end >= recorder.windowEnd) return;
  start = performance.now();
  const challenge = await post('fund (402)', `${base}/fund`, '{}');
  if (challenge.status !== 402) return fail('fund (challenge)', challenge);
  const paidStart = performance.now();
  const credential = sandboxX402PaymentSignature(challenge.headers['payment-required'] as string, { from: sandboxX402Payers.success });
  const funded = await post('fund (paid)', `${base}/fund`, '{}', { 'payment-signature': credential });
  end = performance.now();
  if (funded.status !== 200) return fail('fund (credential)', funded);
  recorder.mutation('fund', start, end, [start, paidStart]);

  if (end >= recorder.windowEnd) return;
  start = performance.now();
  const recorded = await post('evidence', `${base}/evidence`, intent.evidenceBody);
  end = performance.now();
  if (recorded.status !== 200) return fail('evidence', recorded);
  recorder.mutation('evidence', start, end, [start]);

  if (end >= recorder.windowEnd) return;
  start = performance.now();
  const settled = await post('confirm', `${base}/settlement/confirm`, '{}');
  end = performance.now();
  if (settled.status !== 200) return fail('confirm', settled);
  recorder.mutation('confirm', start, end, [start]);
  if (hook) await hook('done');
}

/** An errno and where it happened, for the error list (a failed window's message quotes its first errors). */
function describeFailure(error: Error): string {
  const facts = error as Error & { code?: string; address?: string; port?: number };
  return facts.code ? `${facts.code} ${facts.address ?? ''}:${facts.port ?? ''}` : error.message;
}

/** Closed loop: `clients` workers, each starting its next intent as soon as the last one is settled. */
export async function closedLoop(client: EngineClient, intents: IntentPool, options: { clients: number; seconds: number }): Promise<LoadSample> {
  const windowStart = performance.now();
  const recorder = new Recorder(windowStart + options.seconds * 1000);
  const worker = async () => {
    // A failed request ends the run: the bench reports it rather than measure a service that answers errors.
    while (performance.now() < recorder.windowEnd && recorder.errors.length === 0) {
      const intent = intents.take();
      if (!intent) {
        recorder.exhausted = true;
        return;
      }
      await lifecycle(client, intent, recorder);
    }
  };
  await Promise.all(Array.from({ length: options.clients }, worker));
  return recorder.sample(options.seconds);
}

/** Open loop at a fixed rate: intents start at mutationsPerSecond / 4 per second on average, whatever is in flight
 * (up to the client's sockets; beyond them, requests queue in the agent, and that queue counts in their latency).
 * The gaps between starts are exponential (Poisson arrivals), the schedule `pgbench -R` follows, so that both sides
 * of the tail-latency ratio meet the same kind of bursts. */
export async function pacedLoop(client: EngineClient, intents: IntentPool, options: { mutationsPerSecond: number; seconds: number }): Promise<LoadSample> {
  const windowStart = performance.now();
  const recorder = new Recorder(windowStart + options.seconds * 1000);
  const meanIntervalMs = (1000 * mutations.length) / options.mutationsPerSecond;
  const running: Promise<void>[] = [];
  for (let due = windowStart; ; due += -Math.log(1 - Math.random()) * meanIntervalMs) {
    if (due >= recorder.windowEnd || recorder.errors.length > 0) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const intent = intents.take();
    if (!intent) {
      recorder.exhausted = true;
      break;
    }
    running.push(lifecycle(client, intent, recorder, due));
  }
  await Promise.all(running);
  return recorder.sample(options.seconds);
}

/** The value below which `fraction` of `values` lie (nearest rank). */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

/** Every mutation's latency of a sample, pooled. */
export const allMutationLatencies = (sample: LoadSample): number[] => mutations.flatMap((kind) => sample.latencies[kind]);
