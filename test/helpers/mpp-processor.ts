// A payment processor for the MPP live rail's tests: an HTTP server speaking the subset of the processor's API
// (Stripe's, as Stripe documents it) that mppx's `stripe` charge and the live adapter call: form-encoded
// `POST /v1/payment_intents` honouring `Idempotency-Key` (the same key answers the first answer again, with
// `Idempotent-Replayed: true`, and never charges twice), `GET /v1/payment_intents/:id`, `GET
// /v1/payment_intents/search`, `POST|GET /v1/refunds`, `POST /v1/transfers`, `GET /v1/account` and
// `GET /v1/accounts/:id`, authenticated with the secret key (Bearer, or Basic with the key as user, as Stripe
// takes it). The shared payment token (`shared_payment_granted_token`) picks the outcome, by prefix:
//   spt_success_…      the charge succeeds
//   spt_decline_…      402 card_error card_declined (the payment is left requires_payment_method)
//   spt_processing_…   the payment is `processing`; the next retrieve finds it succeeded
//   spt_action_…       the payment `requires_action`; the next retrieve finds it succeeded
//   spt_timeout_…      the charge succeeds and is recorded at once, but the answer is held for `hangMs`
//   spt_unavailable_…  the first create with this token answers 503 without running; later ones succeed
//   spt_error_…        every create answers 500 without running
//   anything else      400 invalid_request_error resource_missing (no such token)
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, timingSafeEqual } from 'node:crypto';

export interface ProcessorPayment {
  id: string;
  object: 'payment_intent';
  amount: number;
  currency: string;
  status: string;
  latest_charge: string | null;
  amount_received: number;
  metadata: Record<string, string>;
  last_payment_error: { type: string; code: string; decline_code?: string } | null;
  created: number;
  livemode: false;
  /** The token it was created with (kept by the processor; not a field Stripe answers). */
  token: string;
  /** Retrieves before a pending payment settles. */
  settlesAfterRetrieves: number;
}

interface ProcessorRefund {
  id: string;
  object: 'refund';
  amount: number;
  currency: string;
  payment_intent: string;
  status: string;
  metadata: Record<string, string>;
  failure_reason: string | null;
}

interface ProcessorTransfer {
  id: string;
  object: 'transfer';
  amount: number;
  currency: string;
  destination: string;
  source_transaction: string | null;
  transfer_group: string | null;
  metadata: Record<string, string>;
}

interface StoredAnswer {
  fingerprint: string;
  status: number;
  body: unknown;
}

export interface MppProcessorOptions {
  /** The secret key requests must carry. */
  secretKey?: string;
  /** Connected accounts that exist (payout destinations). */
  accounts?: string[];
  /** How long a `spt_timeout_…` charge's answer is held. */
  hangMs?: number;
}

export interface MppProcessor {
  readonly url: string;
  readonly secretKey: string;
  readonly payments: Map<string, ProcessorPayment>;
  readonly refunds: ProcessorRefund[];
  readonly transfers: ProcessorTransfer[];
  /** Every request, in order: method, path (without query), Idempotency-Key, and whether it was authenticated. */
  readonly requests: { method: string; path: string; idempotencyKey: string | undefined; authenticated: boolean }[];
  /** Payments that moved money (succeeded), per token. */
  chargesFor(token: string): number;
  /** Every payment the processor created, per token (any status). */
  paymentsFor(token: string): ProcessorPayment[];
  /** Answer 503 to everything while true (an outage before anything runs). */
  down: boolean;
  close(): Promise<void>;
}

function stripeError(status: number, error: Record<string, unknown>): { status: number; body: unknown } {
  return { status, body: { error } };
}

/** Stripe's form encoding: `a[b][c]=v` nests; `a[0]=v` is kept as an object with index keys (unused here). */
function parseForm(text: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.split(/\[|\]\[|\]$/).filter((part) => part.length > 0);
    let target = result;
    for (const part of parts.slice(0, -1)) {
      if (typeof target[part] !== 'object' || target[part] === null) target[part] = {};
      target = target[part] as Record<string, unknown>;
    }
    target[parts[parts.length - 1]!] = value;
  }
  return result;
}

function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonical(entry)}`).join(',')}}`;
}

function constantTimeEqualText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

function stringRecord(value: unknown): Record<string, string> {
  const record: Record<string, string> = {};
  if (value && typeof value === 'object') for (const [key, entry] of Object.entries(value)) if (typeof entry === 'string') record[key] = entry;
  return record;
}

function publicPayment(payment: ProcessorPayment): Record<string, unknown> {
  const { token: _token, settlesAfterRetrieves: _settles, ...answer } = payment;
  return answer;
}

export async function startMppProcessor(options: MppProcessorOptions = {}): Promise<MppProcessor> {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(16).toString('hex')}`;
  const accounts = new Set(options.accounts ?? []);
  const hangMs = options.hangMs ?? 2_000;
  const payments = new Map<string, ProcessorPayment>();
  const refunds: ProcessorRefund[] = [];
  const transfers: ProcessorTransfer[] = [];
  const requests: MppProcessor['requests'] = [];
  const answers = new Map<string, StoredAnswer>();
  const unavailableTokensSeen = new Set<string>();
  const holds = new Set<NodeJS.Timeout>();

  function authenticated(request: IncomingMessage): boolean {
    const header = request.headers.authorization ?? '';
    const bearer = /^Bearer (.+)$/.exec(header)?.[1];
    const basic = /^Basic (.+)$/.exec(header)?.[1];
    const presented = bearer ?? (basic ? Buffer.from(basic, 'base64').toString('utf8').replace(/:$/, '') : undefined);
    return presented !== undefined && constantTimeEqualText(presented, secretKey);
  }

  /** Runs a POST once per Idempotency-Key: the same key with the same parameters answers the stored answer; with
   * other parameters, 400 idempotency_error. `store: false` answers without storing (a failure before running). */
  function idempotent(key: string | undefined, scope: string, params: Record<string, unknown>, run: () => { status: number; body: unknown; store?: boolean }) {
    const fingerprint = canonical(params);
    if (key !== undefined) {
      const stored = answers.get(`${scope}:${key}`);
      if (stored) {
        if (stored.fingerprint !== fingerprint) {
          return { status: 400, body: { error: { type: 'idempotency_error', message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.' } }, replayed: false };
        }
        return { status: stored.status, body: stored.body, replayed: true };
      }
    }
    const answer = run();
    if (key !== undefined && answer.store !== false) answers.set(`${scope}:${key}`, { fingerprint, status: answer.status, body: answer.body });
    return { status: answer.status, body: answer.body, replayed: false };
  }

  function createPayment(params: Record<string, unknown>): { status: number; body: unknown; store?: boolean; holdMs?: number } {
    const token = typeof params['shared_payment_granted_token'] === 'string' ? params['shared_payment_granted_token'] : '';
    const amount = Number(params['amount']);
    const currency = String(params['currency'] ?? '');
    if (!Number.isSafeInteger(amount) || amount <= 0 || currency.length === 0) {
      return stripeError(400, { type: 'invalid_request_error', code: 'parameter_invalid_integer', param: 'amount', message: 'Invalid amount.' });
    }
    if (token.startsWith('spt_error_')) {
      return { ...stripeError(500, { type: 'api_error', message: 'An unknown error occurred.' }), store: false };
    }
    if (token.startsWith('spt_unavailable_') && !unavailableTokensSeen.has(token)) {
      unavailableTokensSeen.add(token);
      return { ...stripeError(503, { type: 'api_error', message: 'The service is temporarily unavailable.' }), store: false };
    }
    const known = ['spt_success_', 'spt_decline_', 'spt_processing_', 'spt_action_', 'spt_timeout_', 'spt_unavailable_'].some((prefix) => token.startsWith(prefix));
    if (!known) {
      return stripeError(400, { type: 'invalid_request_error', code: 'resource_missing', param: 'shared_payment_granted_token', message: 'No such shared payment token.' });
    }
    const payment: ProcessorPayment = {
      id: newId('pi'),
      object: 'payment_intent',
      amount,
      currency,
      status: 'succeeded',
      latest_charge: null,
      amount_received: 0,
      metadata: stringRecord(params['metadata']),
      last_payment_error: null,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      token,
      settlesAfterRetrieves: 0,
    };
    payments.set(payment.id, payment);
    if (token.startsWith('spt_decline_')) {
      payment.status = 'requires_payment_method';
      payment.last_payment_error = { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' };
      return stripeError(402, {
        type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.', payment_intent: publicPayment(payment),
      });
    }
    if (token.startsWith('spt_processing_') || token.startsWith('spt_action_')) {
      payment.status = token.startsWith('spt_processing_') ? 'processing' : 'requires_action';
      payment.settlesAfterRetrieves = 1;
      return { status: 200, body: publicPayment(payment) };
    }
    settle(payment);
    return { status: 200, body: publicPayment(payment), ...(token.startsWith('spt_timeout_') ? { holdMs: hangMs } : {}) };
  }

  function settle(payment: ProcessorPayment): void {
    payment.status = 'succeeded';
    payment.latest_charge = newId('ch');
    payment.amount_received = payment.amount;
  }

  function refunded(paymentId: string): number {
    return refunds.filter((refund) => refund.payment_intent === paymentId && refund.status === 'succeeded').reduce((sum, refund) => sum + refund.amount, 0);
  }

  function createRefund(params: Record<string, unknown>) {
    const payment = payments.get(String(params['payment_intent'] ?? ''));
    if (!payment) return stripeError(400, { type: 'invalid_request_error', code: 'resource_missing', param: 'payment_intent', message: 'No such payment_intent.' });
    if (payment.status !== 'succeeded') return stripeError(400, { type: 'invalid_request_error', code: 'charge_not_refundable', message: 'This payment cannot be refunded.' });
    const remaining = payment.amount - refunded(payment.id);
    const amount = params['amount'] === undefined ? remaining : Number(params['amount']);
    if (!Number.isSafeInteger(amount) || amount <= 0 || amount > remaining) {
      return stripeError(400, { type: 'invalid_request_error', code: remaining === 0 ? 'charge_already_refunded' : 'amount_too_large', param: 'amount', message: 'Refund amount is invalid.' });
    }
    const refund: ProcessorRefund = {
      id: newId('re'), object: 'refund', amount, currency: payment.currency, payment_intent: payment.id, status: 'succeeded',
      metadata: stringRecord(params['metadata']), failure_reason: null,
    };
    refunds.push(refund);
    return { status: 200, body: refund };
  }

  function createTransfer(params: Record<string, unknown>) {
    const destination = String(params['destination'] ?? '');
    if (!accounts.has(destination)) return stripeError(400, { type: 'invalid_request_error', code: 'resource_missing', param: 'destination', message: 'No such destination.' });
    const amount = Number(params['amount']);
    const source = typeof params['source_transaction'] === 'string' ? params['source_transaction'] : null;
    const payment = source ? [...payments.values()].find((candidate) => candidate.latest_charge === source) : undefined;
    if (source && !payment) return stripeError(400, { type: 'invalid_request_error', code: 'resource_missing', param: 'source_transaction', message: 'No such charge.' });
    const transferred = transfers.filter((transfer) => transfer.source_transaction === source).reduce((sum, transfer) => sum + transfer.amount, 0);
    if (!Number.isSafeInteger(amount) || amount <= 0 || (payment && amount > payment.amount - refunded(payment.id) - transferred)) {
      return stripeError(400, { type: 'invalid_request_error', code: 'insufficient_funds', param: 'amount', message: 'Insufficient funds for this transfer.' });
    }
    const transfer: ProcessorTransfer = {
      id: newId('tr'), object: 'transfer', amount, currency: String(params['currency'] ?? ''), destination, source_transaction: source,
      transfer_group: typeof params['transfer_group'] === 'string' ? params['transfer_group'] : null, metadata: stringRecord(params['metadata']),
    };
    transfers.push(transfer);
    return { status: 200, body: transfer };
  }

  function search(query: string) {
    const match = /^metadata\['([^']+)'\]:'([^']*)'$/.exec(query);
    if (!match) return stripeError(400, { type: 'invalid_request_error', code: 'parameter_invalid', param: 'query', message: 'Unsupported search query.' });
    const data = [...payments.values()].filter((payment) => payment.metadata[match[1]!] === match[2]).map(publicPayment);
    return { status: 200, body: { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' } };
  }

  function route(method: string, path: string, query: URLSearchParams, params: Record<string, unknown>, key: string | undefined) {
    if (method === 'POST' && path === '/v1/payment_intents') {
      let holdMs: number | undefined;
      const answer = idempotent(key, 'payment_intents', params, () => {
        const created = createPayment(params);
        holdMs = created.holdMs;
        return created;
      });
      return { ...answer, holdMs };
    }
    if (method === 'GET' && path === '/v1/payment_intents/search') return search(query.get('query') ?? '');
    const paymentPath = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (method === 'GET' && paymentPath) {
      const payment = payments.get(decodeURIComponent(paymentPath[1]!));
      if (!payment) return stripeError(404, { type: 'invalid_request_error', code: 'resource_missing', message: 'No such payment_intent.' });
      if (payment.settlesAfterRetrieves > 0 && --payment.settlesAfterRetrieves === 0) settle(payment);
      return { status: 200, body: publicPayment(payment) };
    }
    if (method === 'POST' && path === '/v1/refunds') return idempotent(key, 'refunds', params, () => createRefund(params));
    if (method === 'GET' && path === '/v1/refunds') {
      const paymentId = query.get('payment_intent');
      const data = refunds.filter((refund) => paymentId === null || refund.payment_intent === paymentId);
      return { status: 200, body: { object: 'list', data, has_more: false, url: '/v1/refunds' } };
    }
    if (method === 'POST' && path === '/v1/transfers') return idempotent(key, 'transfers', params, () => createTransfer(params));
    if (method === 'GET' && path === '/v1/account') return { status: 200, body: { id: 'acct_platform', object: 'account' } };
    const accountPath = /^\/v1\/accounts\/([^/]+)$/.exec(path);
    if (method === 'GET' && accountPath) {
      const id = decodeURIComponent(accountPath[1]!);
      if (!accounts.has(id)) return stripeError(404, { type: 'invalid_request_error', code: 'resource_missing', message: 'No such account.' });
      return { status: 200, body: { id, object: 'account' } };
    }
    return stripeError(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` });
  }

  const state = { down: false };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://processor.test');
      const method = request.method ?? 'GET';
      const key = typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : undefined;
      const isAuthenticated = authenticated(request);
      requests.push({ method, path: url.pathname, idempotencyKey: key, authenticated: isAuthenticated });
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        if (response.destroyed) return;
        response.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req'), ...headers });
        response.end(JSON.stringify(body));
      };
      if (state.down) return send(503, { error: { type: 'api_error', message: 'The service is temporarily unavailable.' } });
      if (!isAuthenticated) {
        return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } });
      }
      const params = method === 'POST' ? parseForm(Buffer.concat(chunks).toString('utf8')) : {};
      const answer = route(method, url.pathname, url.searchParams, params, key) as { status: number; body: unknown; replayed?: boolean; holdMs?: number };
      const headers: Record<string, string> = answer.replayed ? { 'idempotent-replayed': 'true' } : {};
      if (answer.holdMs) {
        const hold = setTimeout(() => {
          holds.delete(hold);
          send(answer.status, answer.body, headers);
        }, answer.holdMs);
        holds.add(hold);
        return;
      }
      send(answer.status, answer.body, headers);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    secretKey,
    payments,
    refunds,
    transfers,
    requests,
    chargesFor: (token) => [...payments.values()].filter((payment) => payment.token === token && payment.status === 'succeeded').length,
    paymentsFor: (token) => [...payments.values()].filter((payment) => payment.token === token),
    get down() {
      return state.down;
    },
    set down(value: boolean) {
      state.down = value;
    },
    close: async () => {
      for (const hold of holds) clearTimeout(hold);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
