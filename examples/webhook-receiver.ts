// A webhook receiver (docs/events.md#verifying): checks each delivery's Standard Webhooks signature and timestamp with
// the SDK, deduplicates on the event id (delivery is at least once), and answers 2xx quickly.
//
//   SVC_WEBHOOK_SECRET=whsec_… PORT=4242 npx tsx examples/webhook-receiver.ts
//
// then create an endpoint for it (a sandbox tenant may use loopback):
//   curl -X POST $SVC_GATEWAY_URL/v1/webhook-endpoints -H "authorization: Bearer $SVC_API_KEY" \
//     -H 'content-type: application/json' -d '{"url":"http://127.0.0.1:4242/webhooks","enabled_events":["*"]}'
import http from 'node:http';
import { verifyWebhook, WebhookVerificationError, type Event } from 'svc-settlement/sdk';

const secret = process.env.SVC_WEBHOOK_SECRET;
if (!secret) throw new Error('set SVC_WEBHOOK_SECRET to the secret the endpoint was created with');
/** Event ids already handled; a real receiver keeps them in its database, with what it did. */
const seen = new Set<string>();

function handle(event: Event): void {
  switch (event.type) {
    case 'intent.released':
    case 'intent.refunded':
      console.log(`intent ${String(event.data.object.intent_id)} settled: ${event.type}`);
      break;
    case 'payout.failed':
    case 'refund.failed':
      console.warn(`a ${event.type} needs attention: ${JSON.stringify(event.data.object)}`);
      break;
    default:
      console.log(`${event.type} ${event.id}`);
  }
}

http
  .createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        // The raw body, exactly as received: verification is over these bytes, not a re-serialization.
        const event = verifyWebhook({ secret, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        if (!seen.has(event.id)) {
          seen.add(event.id);
          handle(event);
        }
        response.writeHead(204).end();
      } catch (error) {
        response.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
      }
    });
  })
  .listen(Number(process.env.PORT ?? 4242), '127.0.0.1');
