// What every sub-API shares once a session is open: the transport, the tenant scope resolved from the credential,
// the optional agent key for recognition proofs, idempotency keys, and the echo checks on answers (their contracts
// are checked in ./answers.ts).
import { randomUUID } from 'node:crypto';
import { createRecognitionProof, recognitionProofHeaderName } from '../signing/index.ts';
import { idempotencyKeyLengthMax } from './defaults.ts';
import { SvcArgumentError, TenantBindingError } from './errors.ts';
import type { SvcSigningKey } from './keys.ts';
import { withSigningErrors } from './keys.ts';
import { jsonObjectOf, type Transport, type TransportResponse } from './transport.ts';

/** An agent's recognition-proof key (docs/signing.md#recognition-proofs). Live tenants require a proof on every engine
 * mutation; sandbox tenants check one when it is sent. The public key must be registered under `keyId` (kind
 * `agent`). */
export interface AgentIdentity {
  readonly keyId: string;
  readonly key: SvcSigningKey;
  /** Defaults to `svc-gateway`. */
  readonly verifierId?: string;
}

export interface MutationSpec {
  readonly path: string;
  /** The recognition-proof purpose, e.g. `harbor.intent.fund`. */
  readonly purpose: string;
  readonly body: unknown;
  readonly idempotencyKey?: string | undefined;
  readonly headers?: Readonly<Record<string, string>>;
  readonly expectStatuses?: readonly number[];
}

/** The members an echo check reads; any answer object has them or not. */
export interface EchoedScope {
  readonly tenant?: unknown;
  readonly tenant_id?: unknown;
  readonly intent_id?: unknown;
}

const uuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** An intent id as a path segment: it must be a UUID, so it needs no encoding and a proof can bind it as is. */
export function intentPath(intentId: string, suffix = ''): string {
  if (typeof intentId !== 'string' || !uuidPattern.test(intentId)) throw new SvcArgumentError(`intentId must be a UUID, got ${JSON.stringify(intentId)}.`);
  return `/harbor/intents/${intentId}${suffix}`;
}

export function checkIdempotencyKey(key: string): string {
  if (typeof key !== 'string' || key.length < 1 || key.length > idempotencyKeyLengthMax || !/^[\x20-\x7e]+$/.test(key)) {
    throw new SvcArgumentError(`An idempotency key is 1 to ${idempotencyKeyLengthMax} printable ASCII characters.`);
  }
  return key;
}

export class ClientCore {
  readonly transport: Transport;
  readonly tenantId: string;
  readonly environment: string;
  readonly agent: AgentIdentity | undefined;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;

  constructor(init: { transport: Transport; tenantId: string; environment: string; agent: AgentIdentity | undefined; now: () => number; sleep: (ms: number) => Promise<void> }) {
    this.transport = init.transport;
    this.tenantId = init.tenantId;
    this.environment = init.environment;
    this.agent = init.agent;
    this.now = init.now;
    this.sleep = init.sleep;
  }

  /** A GET on a tenant-bound route (`x-tenant-id` from the principal); retried per the rules. */
  async get(path: string, query?: Readonly<Record<string, string | number | undefined>>): Promise<{ body: Record<string, unknown>; response: TransportResponse }> {
    const response = await this.transport.request({ method: 'GET', path, query, retrySafe: true, headers: { 'x-tenant-id': this.tenantId } });
    return { body: jsonObjectOf(response), response };
  }

  /** A POST on a tenant-bound route that is not an engine mutation. `retrySafe` only when repeating it cannot do
   * anything twice (a pure computation, or a route that honours an idempotency key that is sent). */
  async post(path: string, body: unknown, options: { retrySafe: boolean; headers?: Readonly<Record<string, string>> }): Promise<{ body: Record<string, unknown>; response: TransportResponse }> {
    const response = await this.transport.request({
      method: 'POST',
      path,
      bodyText: JSON.stringify(body),
      retrySafe: options.retrySafe,
      headers: { 'x-tenant-id': this.tenantId, ...options.headers },
    });
    return { body: jsonObjectOf(response), response };
  }

  /**
   * One of the four engine mutations: an idempotency key (the caller's, or a fresh UUID) and, with an agent key, a
   * recognition proof over the exact body bytes. Both are fixed before the first attempt, so every retry re-sends
   * the same bytes; the engine accepts a proof's nonce again under the same idempotency key.
   */
  async mutate(spec: MutationSpec): Promise<TransportResponse> {
    const bodyText = JSON.stringify(spec.body);
    const idempotencyKey = checkIdempotencyKey(spec.idempotencyKey ?? randomUUID());
    return this.transport.request({
      method: 'POST',
      path: spec.path,
      bodyText,
      retrySafe: true,
      expectStatuses: spec.expectStatuses,
      headers: {
        'x-tenant-id': this.tenantId,
        'idempotency-key': idempotencyKey,
        ...this.proofHeader(spec.purpose, spec.path, bodyText),
        ...spec.headers,
      },
    });
  }

  proofHeader(purpose: string, path: string, bodyText: string): Record<string, string> {
    const agent = this.agent;
    if (!agent) return {};
    const { headerValue } = withSigningErrors(() =>
      createRecognitionProof({
        signer: agent.key.signer,
        keyId: agent.keyId,
        purpose,
        tenantId: this.tenantId,
        ...(agent.verifierId === undefined ? {} : { verifierId: agent.verifierId }),
        method: 'POST',
        path,
        body: bodyText,
        nowMs: this.now(),
      }),
    );
    return { [recognitionProofHeaderName]: headerValue };
  }

  /** The reference client's echo check: an answer must name this tenant (`tenant`, or `tenant_id`) and, when one
   * was asked about, this intent. */
  checkEcho(body: EchoedScope, response: TransportResponse, intentId?: string): void {
    const tenant = typeof body['tenant'] === 'string' ? body['tenant'] : body['tenant_id'];
    if (tenant !== this.tenantId) {
      throw new TenantBindingError(`The answer names tenant ${JSON.stringify(tenant)}, not ${this.tenantId}.`, response.url, response.status, response.bodyText);
    }
    if (intentId !== undefined && (typeof body['intent_id'] !== 'string' || body['intent_id'].toLowerCase() !== intentId.toLowerCase())) {
      throw new TenantBindingError(`The answer names intent ${JSON.stringify(body['intent_id'])}, not ${intentId}.`, response.url, response.status, response.bodyText);
    }
  }
}
