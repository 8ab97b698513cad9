// Webhook endpoints and their deliveries (docs/events.md, migrations/0028_events.sql): the endpoint rows (secrets
// sealed), the claim of due deliveries by a deliverer (a lease, FOR UPDATE SKIP LOCKED), each attempt's outcome and
// log, and a redelivery of one event.
import { randomBytes } from 'node:crypto';
import type { EventType } from '../contracts/events.ts';
import type { Queryable } from '../infra/database.ts';

export interface WebhookEndpointRecord {
  readonly tenantId: string;
  readonly endpointId: string;
  readonly url: string;
  readonly description: string;
  readonly enabledEvents: readonly string[];
  readonly enabled: boolean;
  readonly disabledReason: 'manual' | 'failing' | null;
  readonly secretSealed: Buffer;
  readonly previousSecretSealed: Buffer | null;
  readonly previousSecretExpiresAt: Date | null;
  readonly consecutiveFailures: number;
  readonly failingSince: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const endpointColumns = `tenant_id, endpoint_id, url, description, enabled_events, enabled, disabled_reason, secret_sealed,
  previous_secret_sealed, previous_secret_expires_at, consecutive_failures, failing_since, created_at, updated_at`;

function toEndpoint(row: Record<string, unknown>): WebhookEndpointRecord {
  return {
    tenantId: row.tenant_id as string,
    endpointId: row.endpoint_id as string,
    url: row.url as string,
    description: row.description as string,
    enabledEvents: row.enabled_events as string[],
    enabled: row.enabled as boolean,
    disabledReason: row.disabled_reason as 'manual' | 'failing' | null,
    secretSealed: row.secret_sealed as Buffer,
    previousSecretSealed: row.previous_secret_sealed as Buffer | null,
    previousSecretExpiresAt: row.previous_secret_expires_at as Date | null,
    consecutiveFailures: row.consecutive_failures as number,
    failingSince: row.failing_since as Date | null,
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
  };
}

export const newEndpointId = (): string => `we_${randomBytes(16).toString('hex')}`;

export async function insertEndpoint(
  tx: Queryable,
  endpoint: { tenantId: string; endpointId: string; url: string; description: string; enabledEvents: readonly string[]; secretSealed: Buffer },
): Promise<WebhookEndpointRecord> {
  const { rows } = await tx.query(
    `INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, description, enabled_events, secret_sealed)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${endpointColumns}`,
    [endpoint.tenantId, endpoint.endpointId, endpoint.url, endpoint.description, endpoint.enabledEvents, endpoint.secretSealed],
  );
  return toEndpoint(rows[0]!);
}

export async function countEndpoints(tx: Queryable, tenantId: string): Promise<number> {
  const { rows } = await tx.query<{ count: string }>('SELECT count(*) AS count FROM webhook_endpoints WHERE tenant_id = $1', [tenantId]);
  return Number(rows[0]!.count);
}

export async function findEndpoint(tx: Queryable, tenantId: string, endpointId: string, options: { lock?: boolean } = {}): Promise<WebhookEndpointRecord | undefined> {
  const { rows } = await tx.query(
    `SELECT ${endpointColumns} FROM webhook_endpoints WHERE tenant_id = $1 AND endpoint_id = $2${options.lock ? ' FOR UPDATE' : ''}`,
    [tenantId, endpointId],
  );
  return rows[0] && toEndpoint(rows[0]);
}

export async function listEndpoints(
  tx: Queryable,
  tenantId: string,
  page: { limit: number; startingAfter?: string | undefined },
): Promise<{ endpoints: WebhookEndpointRecord[]; hasMore: boolean }> {
  const { rows } = await tx.query(
    `SELECT ${endpointColumns} FROM webhook_endpoints
      WHERE tenant_id = $1 AND ($2::text IS NULL OR (created_at, endpoint_id) < (SELECT created_at, endpoint_id FROM webhook_endpoints WHERE tenant_id = $1 AND endpoint_id = $2))
      ORDER BY created_at DESC, endpoint_id DESC LIMIT $3`,
    [tenantId, page.startingAfter ?? null, page.limit + 1],
  );
  return { endpoints: rows.slice(0, page.limit).map(toEndpoint), hasMore: rows.length > page.limit };
}

/** Writes what an update changes; `enabled` false disables it by hand, true enables it (and forgets its failures). */
export async function updateEndpoint(
  tx: Queryable,
  tenantId: string,
  endpointId: string,
  change: { url?: string | undefined; description?: string | undefined; enabledEvents?: readonly string[] | undefined; enabled?: boolean | undefined },
): Promise<WebhookEndpointRecord | undefined> {
  const { rows } = await tx.query(
    `UPDATE webhook_endpoints SET
       url = COALESCE($3, url),
       description = COALESCE($4, description),
       enabled_events = COALESCE($5, enabled_events),
       enabled = COALESCE($6, enabled),
       disabled_reason = CASE WHEN $6::boolean IS NULL THEN disabled_reason WHEN $6 THEN NULL ELSE 'manual' END,
       consecutive_failures = CASE WHEN $6::boolean THEN 0 ELSE consecutive_failures END,
       failing_since = CASE WHEN $6::boolean THEN NULL ELSE failing_since END,
       updated_at = now()
     WHERE tenant_id = $1 AND endpoint_id = $2 RETURNING ${endpointColumns}`,
    [tenantId, endpointId, change.url ?? null, change.description ?? null, change.enabledEvents ?? null, change.enabled ?? null],
  );
  return rows[0] && toEndpoint(rows[0]);
}

export async function rotateEndpointSecret(
  tx: Queryable,
  tenantId: string,
  endpointId: string,
  secretSealed: Buffer,
  previousSealed: Buffer | null,
  overlapSeconds: number,
): Promise<WebhookEndpointRecord | undefined> {
  const { rows } = await tx.query(
    `UPDATE webhook_endpoints SET secret_sealed = $3, previous_secret_sealed = $4,
       previous_secret_expires_at = CASE WHEN $4::bytea IS NULL THEN NULL ELSE now() + make_interval(secs => $5) END, updated_at = now()
     WHERE tenant_id = $1 AND endpoint_id = $2 RETURNING ${endpointColumns}`,
    [tenantId, endpointId, secretSealed, previousSealed, overlapSeconds],
  );
  return rows[0] && toEndpoint(rows[0]);
}

export async function deleteEndpoint(tx: Queryable, tenantId: string, endpointId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND endpoint_id = $2', [tenantId, endpointId]);
  return (rowCount ?? 0) > 0;
}

// ---- deliveries ----

/** A delivery a deliverer claimed, with what the attempt needs: the endpoint, its secrets (sealed), the event. */
export interface ClaimedDelivery {
  readonly tenantId: string;
  readonly environment: 'sandbox' | 'live';
  readonly deliveryId: string;
  readonly endpointId: string;
  /** This attempt's number (1 for the first). */
  readonly attempt: number;
  readonly createdAt: Date;
  readonly url: string;
  readonly secretSealed: Buffer;
  readonly previousSecretSealed: Buffer | null;
  readonly previousSecretExpiresAt: Date | null;
  readonly event: {
    readonly eventId: string;
    readonly seq: string;
    readonly type: EventType;
    readonly createdAt: Date;
    readonly object: Record<string, unknown>;
    readonly ledgerTransactionId: string | null;
    readonly receiptIds: readonly string[];
  };
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints, as the system: each is leased to `replica` until
 * `now + leaseMs` (its next_attempt_at moves there, and its attempt count up), committed before any is sent, so
 * that no other replica claims it while the lease lasts; rows another claim holds are skipped, not waited for. A
 * replica that dies mid-attempt leaves its deliveries due again when the lease ends.
 */
export async function claimDueDeliveries(tx: Queryable, replica: string, now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.query(
    `WITH due AS (
       SELECT delivery.tenant_id, delivery.delivery_id FROM webhook_deliveries delivery
         JOIN webhook_endpoints endpoint ON endpoint.tenant_id = delivery.tenant_id AND endpoint.endpoint_id = delivery.endpoint_id
        WHERE delivery.status = 'pending' AND delivery.next_attempt_at <= $1 AND endpoint.enabled
        ORDER BY delivery.next_attempt_at LIMIT $4
        FOR UPDATE OF delivery SKIP LOCKED)
     UPDATE webhook_deliveries delivery
        SET next_attempt_at = $1::timestamptz + make_interval(secs => $2::double precision / 1000), leased_by = $3, attempts = delivery.attempts + 1
       FROM due, webhook_endpoints endpoint, events event, tenants tenant
      WHERE delivery.tenant_id = due.tenant_id AND delivery.delivery_id = due.delivery_id
        AND endpoint.tenant_id = delivery.tenant_id AND endpoint.endpoint_id = delivery.endpoint_id
        AND event.tenant_id = delivery.tenant_id AND event.event_id = delivery.event_id
        AND tenant.tenant_id = delivery.tenant_id
     RETURNING delivery.tenant_id, tenant.environment, delivery.delivery_id, delivery.endpoint_id, delivery.attempts, delivery.created_at,
       endpoint.url, endpoint.secret_sealed, endpoint.previous_secret_sealed, endpoint.previous_secret_expires_at,
       event.event_id, event.seq, event.type, event.created_at AS event_created_at, event.data, event.ledger_transaction_id, event.receipt_ids`,
    [now, leaseMs, replica, limit],
  );
  return rows.map((row) => ({
    tenantId: row.tenant_id as string,
    environment: row.environment as 'sandbox' | 'live',
    deliveryId: row.delivery_id as string,
    endpointId: row.endpoint_id as string,
    attempt: row.attempts as number,
    createdAt: row.created_at as Date,
    url: row.url as string,
    secretSealed: row.secret_sealed as Buffer,
    previousSecretSealed: row.previous_secret_sealed as Buffer | null,
    previousSecretExpiresAt: row.previous_secret_expires_at as Date | null,
    event: {
      eventId: row.event_id as string,
      seq: row.seq as string,
      type: row.type as EventType,
      createdAt: row.event_created_at as Date,
      object: row.data as Record<string, unknown>,
      ledgerTransactionId: row.ledger_transaction_id as string | null,
      receiptIds: row.receipt_ids as string[],
    },
  }));
}

export interface AttemptOutcome {
  readonly attemptedAt: Date;
  readonly durationMs: number;
  readonly responseStatus: number | null;
  readonly error: string | null;
  readonly succeeded: boolean;
  /** When the next attempt is due; null when there is none (succeeded, or given up). */
  readonly nextAttemptAt: Date | null;
}

/**
 * Records an attempt's outcome: the log row, the delivery (succeeded, due again, or failed), and the endpoint's
 * run of failures. The delivery moves only while this replica's claim of this attempt still stands (a replica whose
 * lease ran out and was claimed again writes the log alone). Answers the endpoint's failures in a row and since
 * when, after this attempt.
 */
export async function recordAttempt(
  tx: Queryable,
  claimed: Pick<ClaimedDelivery, 'tenantId' | 'deliveryId' | 'endpointId' | 'attempt'>,
  replica: string,
  outcome: AttemptOutcome,
): Promise<{ consecutiveFailures: number; failingSince: Date | null } | undefined> {
  const status = outcome.succeeded ? 'succeeded' : outcome.nextAttemptAt === null ? 'failed' : 'pending';
  const [, , endpoint] = await tx.batch([
    {
      text: `INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, attempt, endpoint_id, attempted_at, duration_ms, response_status, error, succeeded)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
      values: [claimed.tenantId, claimed.deliveryId, claimed.attempt, claimed.endpointId, outcome.attemptedAt, outcome.durationMs, outcome.responseStatus, outcome.error, outcome.succeeded],
      read: () => undefined,
    },
    {
      text: `UPDATE webhook_deliveries SET status = $5, next_attempt_at = COALESCE($6::timestamptz, next_attempt_at), leased_by = NULL, last_attempt_at = $7::timestamptz,
               last_response_status = $8, last_error = $9, completed_at = CASE WHEN $5::text = 'pending' THEN NULL ELSE $7::timestamptz END
             WHERE tenant_id = $1 AND delivery_id = $2 AND attempts = $3 AND leased_by = $4 AND status = 'pending'`,
      values: [claimed.tenantId, claimed.deliveryId, claimed.attempt, replica, status, outcome.nextAttemptAt, outcome.attemptedAt, outcome.responseStatus, outcome.error],
      read: () => undefined,
    },
    {
      text: `UPDATE webhook_endpoints SET
               consecutive_failures = CASE WHEN $3 THEN 0 ELSE consecutive_failures + 1 END,
               failing_since = CASE WHEN $3 THEN NULL ELSE COALESCE(failing_since, $4) END
             WHERE tenant_id = $1 AND endpoint_id = $2 RETURNING consecutive_failures, failing_since`,
      values: [claimed.tenantId, claimed.endpointId, outcome.succeeded, outcome.attemptedAt],
      read: ({ rows }) => rows[0] as { consecutive_failures: number; failing_since: Date | null } | undefined,
    },
  ] as const);
  return endpoint && { consecutiveFailures: endpoint.consecutive_failures, failingSince: endpoint.failing_since };
}

/** Disables an enabled endpoint for repeated failure; answers it, or undefined when it was not enabled. */
export async function disableFailingEndpoint(tx: Queryable, tenantId: string, endpointId: string): Promise<WebhookEndpointRecord | undefined> {
  const { rows } = await tx.query(
    `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', updated_at = now()
     WHERE tenant_id = $1 AND endpoint_id = $2 AND enabled RETURNING ${endpointColumns}`,
    [tenantId, endpointId],
  );
  return rows[0] && toEndpoint(rows[0]);
}

export interface DeliveryAttemptRow {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly attemptedAt: Date;
  readonly durationMs: number;
  readonly succeeded: boolean;
  readonly responseStatus: number | null;
  readonly error: string | null;
  readonly deliveryStatus: 'pending' | 'succeeded' | 'failed';
  readonly nextAttemptAt: Date | null;
}

/** An endpoint's attempts, newest first. */
export async function listAttempts(tx: Queryable, tenantId: string, endpointId: string, limit: number): Promise<{ attempts: DeliveryAttemptRow[]; hasMore: boolean }> {
  const { rows } = await tx.query(
    `SELECT attempt.delivery_id, delivery.event_id, event.type, attempt.attempt, attempt.attempted_at, attempt.duration_ms, attempt.succeeded,
            attempt.response_status, attempt.error, delivery.status, delivery.next_attempt_at
       FROM webhook_delivery_attempts attempt
       JOIN webhook_deliveries delivery ON delivery.tenant_id = attempt.tenant_id AND delivery.delivery_id = attempt.delivery_id
       JOIN events event ON event.tenant_id = delivery.tenant_id AND event.event_id = delivery.event_id
      WHERE attempt.tenant_id = $1 AND attempt.endpoint_id = $2
      ORDER BY attempt.attempted_at DESC, attempt.attempt DESC LIMIT $3`,
    [tenantId, endpointId, limit + 1],
  );
  return {
    hasMore: rows.length > limit,
    attempts: rows.slice(0, limit).map((row) => ({
      deliveryId: row.delivery_id as string,
      eventId: row.event_id as string,
      eventType: row.type as string,
      attempt: row.attempt as number,
      attemptedAt: row.attempted_at as Date,
      durationMs: row.duration_ms as number,
      succeeded: row.succeeded as boolean,
      responseStatus: row.response_status as number | null,
      error: row.error as string | null,
      deliveryStatus: row.status as 'pending' | 'succeeded' | 'failed',
      nextAttemptAt: row.status === 'pending' ? (row.next_attempt_at as Date) : null,
    })),
  };
}

/** Queues one event for one endpoint again: a new delivery, due now, whatever became of the earlier ones. */
export async function insertRedelivery(tx: Queryable, tenantId: string, endpointId: string, eventId: string): Promise<string> {
  const deliveryId = `whd_${randomBytes(16).toString('hex')}`;
  await tx.query('INSERT INTO webhook_deliveries (tenant_id, delivery_id, endpoint_id, event_id) VALUES ($1, $2, $3, $4)', [tenantId, deliveryId, endpointId, eventId]);
  return deliveryId;
}
