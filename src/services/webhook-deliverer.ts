// The webhook deliverer (docs/events.md#delivery), a background service every replica runs (composed in src/app.ts):
// it claims due deliveries (a lease each, committed first, FOR UPDATE SKIP LOCKED, so that two replicas never send
// the same attempt at once), sends each with Standard Webhooks headers and a deadline, and records the outcome:
// succeeded on a 2xx, else due again after the next wait of the retry schedule (jittered), or failed once the
// schedule is spent. An endpoint failing without a success for long enough is disabled, with an event saying so. A
// replica killed mid-attempt loses nothing: its claims fall due again when their leases end (delivery is at least
// once; receivers deduplicate on webhook-id).
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { randomBytes } from 'node:crypto';
import { recordEvent } from '../db/event-repository.ts';
import { claimDueDeliveries, disableFailingEndpoint, recordAttempt, type AttemptOutcome, type ClaimedDelivery } from '../db/webhook-repository.ts';
import { crashPoint } from '../engine/crash-points.ts';
import { PeriodicPass, type BackgroundService } from '../infra/background.ts';
import type { Database } from '../infra/database.ts';
import type { GatewayKeyring } from '../infra/gateway-keys.ts';
import type { SecretBox } from '../infra/secret-box.ts';
import {
  webhookAttemptTimeoutMsDefault,
  webhookClaimBatchMax,
  webhookDisableAfterFailingMs,
  webhookDisableAfterFailures,
  webhookPollIntervalMs,
  webhookResponseBytesMax,
  webhookRetryDelaysMs,
  webhookRetryJitter,
} from '../limits.ts';
import { webhookHeaders } from '../signing/webhook-signature.ts';
import { presentEvent } from './event-service.ts';
import { addressAllowed, addressKind, type DestinationPolicy } from './webhook-destination.ts';
import { presentEndpoint, signingSecrets } from './webhook-endpoint-service.ts';

export interface WebhookDelivererOptions {
  readonly database: Database;
  /** Opens the endpoints' secrets; without one nothing can be signed, and nothing is claimed. */
  readonly secretBox: SecretBox | undefined;
  /** Signs the `v1a,` Ed25519 signature with its active key. */
  readonly keyring: GatewayKeyring;
  readonly log: { info(object: object, message: string): void; warn(object: object, message: string): void; error(object: object, message: string): void };
  /** `SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS`: live tenants may send to private, loopback and link-local addresses. */
  readonly allowPrivateDestinations?: boolean;
  /** Deadline of one attempt (`SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS`); a claim's lease is three times as long. */
  readonly attemptTimeoutMs?: number;
  /** Names this replica's claims; random by default. */
  readonly replicaId?: string;
  /** A number in [0, 1) for the jitter; Math.random by default. */
  readonly random?: () => number;
}

/** The wait before attempt `attempt + 1` after attempt `attempt` failed, jittered; null when the schedule is spent. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | null {
  const base = webhookRetryDelaysMs[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 + (random() * 2 - 1) * webhookRetryJitter));
}

export class WebhookDeliverer {
  readonly #options: WebhookDelivererOptions;
  readonly replicaId: string;
  readonly #timeoutMs: number;

  constructor(options: WebhookDelivererOptions) {
    this.#options = options;
    this.replicaId = options.replicaId ?? `replica_${randomBytes(8).toString('hex')}`;
    this.#timeoutMs = options.attemptTimeoutMs ?? webhookAttemptTimeoutMsDefault;
  }

  /** A claim's lease: longer than an attempt may take, so that only a dead replica's claim is taken again. */
  get leaseMs(): number {
    return this.#timeoutMs * 3;
  }

  /** Delivers what is due, batch after batch, until a batch finds less than a full one due. Answers the attempts
   * made. `now` is the schedule's clock (tests move it); the signatures' timestamp is always the wall clock. */
  async drain(now: () => Date = () => new Date()): Promise<number> {
    let attempts = 0;
    for (;;) {
      const made = await this.deliverBatch(now());
      attempts += made;
      if (made < webhookClaimBatchMax) return attempts;
    }
  }

  /** Claims one batch of due deliveries and makes their attempts, concurrently. Answers how many it claimed. */
  async deliverBatch(now: Date = new Date()): Promise<number> {
    const { database, secretBox } = this.#options;
    if (!secretBox) return 0;
    const claimed = await database.system((tx) => claimDueDeliveries(tx, this.replicaId, now, this.leaseMs, webhookClaimBatchMax));
    await Promise.all(claimed.map((delivery) => this.#attempt(delivery, secretBox, now)));
    return claimed.length;
  }

  async #attempt(delivery: ClaimedDelivery, box: SecretBox, now: Date): Promise<void> {
    const { log } = this.#options;
    const started = Date.now();
    let sent: { responseStatus: number | null; error: string | null };
    try {
      const body = JSON.stringify(presentEvent({ tenantId: delivery.tenantId, ...delivery.event }));
      const headers = webhookHeaders(
        { id: delivery.event.eventId, timestampSeconds: Math.floor(Date.now() / 1000), body },
        signingSecrets(box, delivery, now),
        this.#options.keyring.active.signer,
      );
      const policy: DestinationPolicy = { environment: delivery.environment, allowPrivateDestinations: this.#options.allowPrivateDestinations ?? false };
      sent = await post(delivery.url, headers, body, policy, this.#timeoutMs);
      crashPoint('webhook.after_send');
    } catch (error) {
      // A secret that does not open (the deployment's key changed) is the operator's to fix; the attempt fails.
      sent = { responseStatus: null, error: `could not sign the delivery: ${(error as Error).message}`.slice(0, 500) };
    }
    const succeeded = sent.responseStatus !== null && sent.responseStatus >= 200 && sent.responseStatus < 300;
    const waitMs = succeeded ? null : retryDelayMs(delivery.attempt, this.#options.random);
    const outcome: AttemptOutcome = {
      attemptedAt: now,
      durationMs: Date.now() - started,
      responseStatus: sent.responseStatus,
      error: succeeded ? null : (sent.error ?? `the receiver answered ${sent.responseStatus}`),
      succeeded,
      nextAttemptAt: waitMs === null ? null : new Date(now.getTime() + waitMs),
    };
    try {
      await this.#options.database.tenant(delivery.tenantId, async (tx) => {
        const endpoint = await recordAttempt(tx, delivery, this.replicaId, outcome);
        if (!succeeded && endpoint && endpoint.consecutiveFailures >= webhookDisableAfterFailures && endpoint.failingSince !== null
          && endpoint.failingSince.getTime() <= now.getTime() - webhookDisableAfterFailingMs) {
          const disabled = await disableFailingEndpoint(tx, delivery.tenantId, delivery.endpointId);
          if (disabled) {
            recordEvent(tx, delivery.tenantId, { type: 'webhook_endpoint.disabled', object: presentEndpoint(disabled) });
            log.warn({ tenant: delivery.tenantId, endpoint: delivery.endpointId }, 'webhook endpoint disabled after repeated failure');
          }
        }
      });
    } catch (error) {
      // The claim stands until its lease ends; the attempt is then made again (at least once).
      log.error({ err: error, delivery: delivery.deliveryId }, 'could not record a webhook attempt');
    }
  }
}

/** The background service the app runs: drains due deliveries every webhookPollIntervalMs. */
export function webhookDelivererService(deliverer: WebhookDeliverer, log: WebhookDelivererOptions['log']): BackgroundService {
  return new PeriodicPass({
    intervalMs: webhookPollIntervalMs,
    firstPassDelayMs: 0,
    pass: async () => {
      await deliverer.drain();
    },
    onError: (error) => log.error({ err: error }, 'webhook delivery pass failed'),
  });
}

/** POSTs `body` to `url` within `timeoutMs`, connecting only to addresses the policy allows (checked on the resolved
 * addresses the connection uses, so a name cannot be re-pointed in between); redirects are not followed. */
function post(url: string, headers: Record<string, string>, body: string, policy: DestinationPolicy, timeoutMs: number): Promise<{ responseStatus: number | null; error: string | null }> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ responseStatus: null, error: 'the endpoint url is not a URL' });
      return;
    }
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !addressAllowed(host, policy)) {
      resolve({ responseStatus: null, error: `destination refused: ${addressKind(host)} address` });
      return;
    }
    const lookup: LookupFunction = (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 0);
        const allowed = addresses.filter(({ address }) => addressAllowed(address, policy));
        if (allowed.length === 0) return callback(Object.assign(new Error(`destination refused: ${hostname} resolves to no allowed address`), { code: 'EDESTINATION' }), '', 0);
        if ((options as { all?: boolean }).all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, allowed);
        return callback(null, allowed[0]!.address, allowed[0]!.family);
      });
    };
    const client = target.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (result: { responseStatus: number | null; error: string | null }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = client.request(target, {
      method: 'POST',
      lookup,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'svc-webhooks/1' },
    }, (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > webhookResponseBytesMax) response.destroy();
      });
      const done = () => finish({ responseStatus: response.statusCode ?? null, error: null });
      response.on('end', done);
      response.on('close', done);
      response.on('error', done);
    });
    const timer = setTimeout(() => {
      request.destroy(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('error', (error: Error) => finish({ responseStatus: null, error: error.message.slice(0, 500) }));
    request.end(body);
  });
}
