// Webhook endpoints (docs/events.md#webhook-endpoints): created with a signing secret answered once and sealed at rest
// (src/infra/secret-box.ts), its URL judged by the destination policy; updated, deleted; the secret rotated with an
// overlap during which deliveries carry a signature by each secret; one event redelivered.
import type { WebhookEndpoint, WebhookEndpointCreateBody, WebhookEndpointUpdateBody } from '../contracts/events.ts';
import { findEvent } from '../db/event-repository.ts';
import {
  countEndpoints,
  findEndpoint,
  insertEndpoint,
  insertRedelivery,
  newEndpointId,
  rotateEndpointSecret,
  updateEndpoint,
  type WebhookEndpointRecord,
} from '../db/webhook-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { secretContext, type SecretBox } from '../infra/secret-box.ts';
import { webhookEndpointsPerTenantMax, webhookSecretOverlapSecondsDefault } from '../limits.ts';
import { mintWebhookSecret } from '../signing/webhook-signature.ts';
import { checkEndpointUrl, type DestinationPolicy } from './webhook-destination.ts';

/** The secret box's context of an endpoint's secret: bound to its tenant and endpoint, so a sealed secret copied to
 * another row does not open. */
export const endpointSecretContext = (tenantId: string, endpointId: string) => secretContext(tenantId, `webhook_endpoint:${endpointId}`);

export function presentEndpoint(endpoint: WebhookEndpointRecord): WebhookEndpoint {
  return {
    object: 'webhook_endpoint',
    id: endpoint.endpointId,
    url: endpoint.url,
    description: endpoint.description,
    enabled_events: [...endpoint.enabledEvents],
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    previous_secret_expires_at: endpoint.previousSecretExpiresAt?.toISOString() ?? null,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

function boxOf(box: SecretBox | undefined): SecretBox {
  if (!box) throw new ServiceError('webhook_endpoint.secrets_key_missing');
  return box;
}

/** `*` alone stands for every type; listed with others it adds nothing, so it is kept alone. */
const normalizedEvents = (events: readonly string[]): string[] => (events.includes('*') ? ['*'] : [...new Set(events)]);

export async function createEndpoint(
  tx: Queryable,
  tenantId: string,
  policy: DestinationPolicy,
  box: SecretBox | undefined,
  body: WebhookEndpointCreateBody,
): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
  const sealer = boxOf(box);
  const url = checkEndpointUrl(body.url, policy);
  if ((await countEndpoints(tx, tenantId)) >= webhookEndpointsPerTenantMax) throw new ServiceError('webhook_endpoint.limit_reached', { details: { limit: webhookEndpointsPerTenantMax } });
  const endpointId = newEndpointId();
  const secret = mintWebhookSecret();
  const endpoint = await insertEndpoint(tx, {
    tenantId,
    endpointId,
    url,
    description: body.description ?? '',
    enabledEvents: normalizedEvents(body.enabled_events),
    secretSealed: sealer.seal(secret, endpointSecretContext(tenantId, endpointId)),
  });
  return { endpoint, secret };
}

export async function changeEndpoint(tx: Queryable, tenantId: string, endpointId: string, policy: DestinationPolicy, body: WebhookEndpointUpdateBody): Promise<WebhookEndpointRecord> {
  const updated = await updateEndpoint(tx, tenantId, endpointId, {
    url: body.url === undefined ? undefined : checkEndpointUrl(body.url, policy),
    description: body.description,
    enabledEvents: body.enabled_events === undefined ? undefined : normalizedEvents(body.enabled_events),
    enabled: body.enabled,
  });
  if (!updated) throw new ServiceError('webhook_endpoint.not_found');
  return updated;
}

/** A new secret, answered once; the replaced one keeps signing deliveries (as a second `v1,` signature) for
 * `overlapSeconds` (0: not at all). A secret replaced before its overlap ended is dropped: two rotations in a row
 * leave the newest two. */
export async function rotateSecret(
  tx: Queryable,
  tenantId: string,
  endpointId: string,
  box: SecretBox | undefined,
  overlapSeconds: number = webhookSecretOverlapSecondsDefault,
): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
  const sealer = boxOf(box);
  const existing = await findEndpoint(tx, tenantId, endpointId, { lock: true });
  if (!existing) throw new ServiceError('webhook_endpoint.not_found');
  const secret = mintWebhookSecret();
  const context = endpointSecretContext(tenantId, endpointId);
  const endpoint = await rotateEndpointSecret(tx, tenantId, endpointId, sealer.seal(secret, context), overlapSeconds > 0 ? existing.secretSealed : null, overlapSeconds);
  return { endpoint: endpoint!, secret };
}

/** The signing secrets of an endpoint at `now`: the current one, and the replaced one while its overlap lasts. */
export function signingSecrets(
  box: SecretBox,
  endpoint: { tenantId: string; endpointId: string; secretSealed: Buffer; previousSecretSealed: Buffer | null; previousSecretExpiresAt: Date | null },
  now: Date,
): string[] {
  const context = endpointSecretContext(endpoint.tenantId, endpoint.endpointId);
  const secrets = [box.open(endpoint.secretSealed, context)];
  if (endpoint.previousSecretSealed && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
    secrets.push(box.open(endpoint.previousSecretSealed, context));
  }
  return secrets;
}

/** Queues one of the tenant's events for one endpoint again (the endpoint need not listen for its type). */
export async function redeliver(tx: Queryable, tenantId: string, endpointId: string, eventId: string): Promise<string> {
  const [endpoint, event] = [await findEndpoint(tx, tenantId, endpointId), await findEvent(tx, tenantId, eventId)];
  if (!endpoint) throw new ServiceError('webhook_endpoint.not_found');
  if (!event) throw new ServiceError('event.not_found');
  return insertRedelivery(tx, tenantId, endpointId, eventId);
}
