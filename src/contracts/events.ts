// Contracts of the event log and webhook endpoints (docs/events.md): the event types (one catalogue, which the engine's
// lifecycle table, the services and the SDKs name), an event as the API and every webhook delivery carry it, the
// list query, and the webhook endpoint routes' bodies and answers.
import Type, { type Static } from 'typebox';
import { pageSizeDefault, pageSizeMax, webhookDescriptionLengthMax, webhookEnabledEventsMax, webhookUrlLengthMax } from '../limits.ts';
import { Nullable, Timestamp } from './common.ts';

/**
 * Every event type. `intent.*` types are the states a lifecycle transition enters (src/engine/lifecycle.ts declares
 * each state's), and two funding outcomes that move no state. `intent.resolved_split`, `intent.held` and
 * `intent.review_resolved` are declared for the states and commands being added to the lifecycle: a state declares
 * the type it is entered with, so these are emitted as soon as those states exist.
 */
export const eventTypes = [
  'intent.created',
  'intent.funded',
  'intent.funding_declined',
  'intent.funding_pending',
  'intent.evidence_recorded',
  'intent.released',
  'intent.refunded',
  'intent.resolved_split',
  'intent.held',
  'intent.review_resolved',
  'payout.succeeded',
  'payout.failed',
  'refund.succeeded',
  'refund.failed',
  'api_key.created',
  'api_key.revoked',
  'api_key.rotated',
  'settlement_config.updated',
  'audit_export.ready',
  'webhook_endpoint.disabled',
] as const;
export type EventType = (typeof eventTypes)[number];
export const EventType = Type.Enum(eventTypes);

export const isEventType = (value: string): value is EventType => (eventTypes as readonly string[]).includes(value);

export const EventId = Type.String({ pattern: '^evt_[0-9a-f]{32}$' });
export const WebhookEndpointId = Type.String({ pattern: '^we_[0-9a-f]{32}$' });
export const WebhookDeliveryId = Type.String({ pattern: '^whd_[0-9a-f]{32}$' });

/** An event: what changed (`type`), when, and the object as it stood after the change. */
export const Event = Type.Object(
  {
    object: Type.Literal('event'),
    id: EventId,
    type: EventType,
    created_at: Timestamp,
    data: Type.Object(
      { object: Type.Record(Type.String(), Type.Unknown(), { description: 'The object after the change (an intent, an API key, …), as its own route answers it.' }) },
      { additionalProperties: false },
    ),
    ledger_transaction_id: Nullable(Type.String({ description: 'The ledger transaction the change posted, if any.' })),
    receipt_ids: Type.Array(Type.String(), { description: 'The receipts the change issued, if any.' }),
  },
  { additionalProperties: false },
);
export type Event = Static<typeof Event>;

export const EventListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault })),
    cursor: Type.Optional(EventId),
    type: Type.Optional(EventType),
  },
  { additionalProperties: false },
);
export type EventListQuery = Static<typeof EventListQuery>;

export const EventParams = Type.Object({ event_id: EventId }, { additionalProperties: false });

export const EventPage = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(Event),
    has_more: Type.Boolean(),
    next_cursor: Nullable(EventId),
  },
  { additionalProperties: false, description: 'Events, newest first.' },
);
export type EventPage = Static<typeof EventPage>;

// ---- webhook endpoints ----

/** An event type, or `*` for every type (those added later included). */
const EnabledEvent = Type.Union([EventType, Type.Literal('*')]);
const EndpointUrl = Type.String({ minLength: 1, maxLength: webhookUrlLengthMax });
const EnabledEvents = Type.Array(EnabledEvent, { minItems: 1, maxItems: webhookEnabledEventsMax });

export const WebhookEndpointCreateBody = Type.Object(
  {
    url: EndpointUrl,
    enabled_events: EnabledEvents,
    description: Type.Optional(Type.String({ maxLength: webhookDescriptionLengthMax })),
  },
  { additionalProperties: false },
);
export type WebhookEndpointCreateBody = Static<typeof WebhookEndpointCreateBody>;

export const WebhookEndpointUpdateBody = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Type.String({ maxLength: webhookDescriptionLengthMax })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type WebhookEndpointUpdateBody = Static<typeof WebhookEndpointUpdateBody>;

export const WebhookEndpointParams = Type.Object({ endpoint_id: WebhookEndpointId }, { additionalProperties: false });

export const WebhookEndpoint = Type.Object(
  {
    object: Type.Literal('webhook_endpoint'),
    id: WebhookEndpointId,
    url: Type.String(),
    description: Type.String(),
    enabled_events: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    disabled_reason: Nullable(Type.Union([Type.Literal('manual'), Type.Literal('failing')])),
    previous_secret_expires_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

/** The create and rotate answers: the endpoint and, this once, its signing secret. */
export const WebhookEndpointWithSecret = Type.Object(
  { ...WebhookEndpoint.properties, secret: Type.String({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' }) },
  { additionalProperties: false },
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

export const WebhookEndpointListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault })), cursor: Type.Optional(WebhookEndpointId) },
  { additionalProperties: false },
);
export type WebhookEndpointListQuery = Static<typeof WebhookEndpointListQuery>;

export const WebhookEndpointPage = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(WebhookEndpoint), has_more: Type.Boolean(), next_cursor: Nullable(WebhookEndpointId) },
  { additionalProperties: false },
);

export const WebhookEndpointDeleted = Type.Object(
  { object: Type.Literal('webhook_endpoint'), id: WebhookEndpointId, deleted: Type.Literal(true) },
  { additionalProperties: false },
);

export const WebhookSecretRotateBody = Type.Object(
  {
    /** How long deliveries keep carrying a signature by the replaced secret too: 0 ends it at once. */
    previous_secret_expires_in_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 60 * 60 })),
  },
  { additionalProperties: false },
);
export type WebhookSecretRotateBody = Static<typeof WebhookSecretRotateBody>;

/** One attempt to deliver an event to an endpoint. */
export const WebhookDeliveryAttempt = Type.Object(
  {
    object: Type.Literal('webhook_delivery_attempt'),
    delivery_id: WebhookDeliveryId,
    event_id: EventId,
    event_type: Type.String(),
    attempt: Type.Integer({ minimum: 1 }),
    attempted_at: Timestamp,
    duration_ms: Type.Integer({ minimum: 0 }),
    succeeded: Type.Boolean(),
    response_status: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    /** Where the delivery stands now: `pending` (another attempt is due), `succeeded`, or `failed` (given up). */
    delivery_status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    next_attempt_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type WebhookDeliveryAttempt = Static<typeof WebhookDeliveryAttempt>;

export const WebhookDeliveryListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault })) },
  { additionalProperties: false },
);

export const WebhookDeliveryPage = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(WebhookDeliveryAttempt), has_more: Type.Boolean(), next_cursor: Nullable(Type.String()) },
  { additionalProperties: false, description: 'Attempts, newest first.' },
);

export const WebhookRedeliverParams = Type.Object({ endpoint_id: WebhookEndpointId, event_id: EventId }, { additionalProperties: false });

/** The redelivery answer: the delivery queued anew. */
export const WebhookRedelivery = Type.Object(
  { object: Type.Literal('webhook_delivery'), id: WebhookDeliveryId, endpoint_id: WebhookEndpointId, event_id: EventId, status: Type.Literal('pending') },
  { additionalProperties: false },
);
