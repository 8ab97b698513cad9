// `client.events`: the tenant's event log (docs/events.md), each answer checked against its contract; and, for a
// webhook receiver, `verifyWebhook`, which checks a delivery's Standard Webhooks signature and timestamp and answers
// the event typed.
import type { Event, EventType } from '../contracts/events.ts';
import { verifyWebhook as verifySignedDelivery, type WebhookVerifyOptions } from '../signing/webhook-signature.ts';
import { checkedAnswer, checkedEvent } from './answers.ts';
import type { ClientCore } from './core.ts';

export type { Event, EventType };
export { WebhookVerificationError, webhookToleranceSecondsDefault, type WebhookVerifyOptions } from '../signing/webhook-signature.ts';

/** An event of one type: `data.object` narrowed by what the type says it is. */
export type EventOf<Type extends EventType> = Event & { readonly type: Type };

/**
 * Checks a webhook delivery (the raw body, exactly as received, and its headers): the timestamp within the tolerance
 * (5 minutes by default) and a `v1,` signature by the endpoint's secret (or one of several, during a rotation),
 * compared in constant time. Answers the event, checked against its contract; throws WebhookVerificationError (or
 * SvcContractError for a body that is no event).
 */
export function verifyWebhook(options: WebhookVerifyOptions): Event {
  return checkedEvent(verifySignedDelivery(options));
}

export class Events {
  readonly #core: ClientCore;

  constructor(core: ClientCore) {
    this.#core = core;
  }

  /** One page of events, newest first; pass `next_cursor` back as `cursor` for the next. */
  async list(options: { limit?: number; cursor?: string; type?: EventType } = {}) {
    const { body, response } = await this.#core.get('/v1/events', { limit: options.limit, cursor: options.cursor, type: options.type });
    return checkedAnswer('EventPage', body, response);
  }

  async get(eventId: string): Promise<Event> {
    const { body, response } = await this.#core.get(`/v1/events/${encodeURIComponent(eventId)}`);
    return checkedAnswer('Event', body, response);
  }
}
