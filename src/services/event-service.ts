// Events as the API and webhook deliveries show them (docs/events.md): the stored event, presented in one shape for
// GET /v1/events, the MCP tool, the CLI and every delivery's body.
import type { Event } from '../contracts/events.ts';
import type { StoredEvent } from '../db/event-repository.ts';

export function presentEvent(event: StoredEvent): Event {
  return {
    object: 'event',
    id: event.eventId,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    data: { object: event.object },
    ledger_transaction_id: event.ledgerTransactionId,
    receipt_ids: [...event.receiptIds],
  };
}
