// The event log (docs/events.md, migrations/0028_events.sql): `recordEvent` queues an event to travel with the
// COMMIT of the transaction that makes the change it describes (a transactional outbox), together with one delivery
// per enabled webhook endpoint of the tenant that listens for its type; reading a tenant's events newest first.
import { randomBytes } from 'node:crypto';
import type { EventType } from '../contracts/events.ts';
import type { Queryable } from '../infra/database.ts';

export interface NewEvent {
  readonly type: EventType;
  /** The object after the change, as the API shows it (its `object` member names its kind). */
  readonly object: Readonly<Record<string, unknown>>;
  readonly ledgerTransactionId?: string | null | undefined;
  readonly receiptIds?: readonly string[] | undefined;
}

export interface StoredEvent {
  readonly tenantId: string;
  readonly eventId: string;
  readonly seq: string;
  readonly type: EventType;
  readonly createdAt: Date;
  readonly object: Record<string, unknown>;
  readonly ledgerTransactionId: string | null;
  readonly receiptIds: readonly string[];
}

export const newEventId = (): string => `evt_${randomBytes(16).toString('hex')}`;

/**
 * Queues `event` for `tenantId` to travel with the transaction's COMMIT (no round trip of its own): it is written
 * exactly when the change it describes commits, and its deliveries with it, one per enabled endpoint of the tenant
 * that listens for its type (or for `*`). Answers the event's id.
 */
export function recordEvent(tx: Queryable, tenantId: string, event: NewEvent): string {
  const eventId = newEventId();
  tx.beforeCommit({
    text: `WITH recorded AS (
             INSERT INTO events (tenant_id, event_id, type, data, ledger_transaction_id, receipt_ids)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING tenant_id, event_id, type)
           INSERT INTO webhook_deliveries (tenant_id, delivery_id, endpoint_id, event_id)
           SELECT recorded.tenant_id, 'whd_' || replace(gen_random_uuid()::text, '-', ''), endpoint.endpoint_id, recorded.event_id
             FROM recorded JOIN webhook_endpoints endpoint ON endpoint.tenant_id = recorded.tenant_id
            WHERE endpoint.enabled AND (recorded.type = ANY (endpoint.enabled_events) OR '*' = ANY (endpoint.enabled_events))`,
    values: [tenantId, eventId, event.type, JSON.stringify(event.object), event.ledgerTransactionId ?? null, event.receiptIds ?? []],
  });
  return eventId;
}

const columns = 'tenant_id, event_id, seq, type, created_at, data, ledger_transaction_id, receipt_ids';

function toEvent(row: Record<string, unknown>): StoredEvent {
  return {
    tenantId: row.tenant_id as string,
    eventId: row.event_id as string,
    seq: row.seq as string,
    type: row.type as EventType,
    createdAt: row.created_at as Date,
    object: row.data as Record<string, unknown>,
    ledgerTransactionId: row.ledger_transaction_id as string | null,
    receiptIds: row.receipt_ids as string[],
  };
}

export async function findEvent(tx: Queryable, tenantId: string, eventId: string): Promise<StoredEvent | undefined> {
  const { rows } = await tx.query(`SELECT ${columns} FROM events WHERE tenant_id = $1 AND event_id = $2`, [tenantId, eventId]);
  return rows[0] && toEvent(rows[0]);
}

/** A page of the tenant's events, newest first, after the event `startingAfter` (an id of the tenant's; an unknown
 * one starts nowhere and answers an empty page), of one type when `type` is given. Reads one more than `limit` to
 * tell whether there are more. */
export async function listEvents(
  tx: Queryable,
  tenantId: string,
  page: { limit: number; startingAfter?: string | undefined; type?: EventType | undefined },
): Promise<{ events: StoredEvent[]; hasMore: boolean }> {
  const { rows } = await tx.query(
    `SELECT ${columns} FROM events
      WHERE tenant_id = $1
        AND ($2::text IS NULL OR seq < (SELECT seq FROM events WHERE tenant_id = $1 AND event_id = $2))
        AND ($3::text IS NULL OR type = $3)
      ORDER BY seq DESC LIMIT $4`,
    [tenantId, page.startingAfter ?? null, page.type ?? null, page.limit + 1],
  );
  const events = rows.slice(0, page.limit).map(toEvent);
  return { events, hasMore: rows.length > page.limit };
}

/** Deletes up to `max` events created before `before` (their deliveries and attempts go with them), as the system. */
export async function deleteEventsBefore(tx: Queryable, before: Date, max: number): Promise<number> {
  const { rowCount } = await tx.query(
    `DELETE FROM events WHERE (tenant_id, event_id) IN (SELECT tenant_id, event_id FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
    [before, max],
  );
  return rowCount ?? 0;
}
