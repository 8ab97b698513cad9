// `svc events tail`: the tenant's recent events over HTTP (GET /v1/events, docs/events.md), oldest of them first,
// and with --follow the new ones as they are recorded (polled, since the log is read, not pushed).
import { eventTypes, type EventType } from '../../contracts/events.ts';
import { SvcClient } from '../../sdk/client.ts';
import { UsageError, usageOf, type CliCommand } from '../command.ts';

const pollIntervalMs = 2_000;

export const eventsTail: CliCommand = {
  name: 'events tail',
  summary: "Prints the tenant's recent events (GET /v1/events), and with --follow the new ones as they come.",
  synopsis: '[--limit N] [--type TYPE] [--follow] [--server URL] [--api-key KEY] [--json]',
  details: [
    '--limit N               how many recent events to print first (1 to 200, default 20)',
    '--type TYPE             only events of this type (intent.funded, payout.failed, …; docs/events.md lists them)',
    '--follow                keep polling every 2 s and print new events until interrupted',
    '--server URL            the service (default SVC_GATEWAY_URL, else the stored login\'s server)',
    '--api-key KEY           the credential (default SVC_API_KEY, else the one `svc login` kept)',
    '--json                  one event per line, as the API answers it',
  ],
  options: { limit: { type: 'string' }, type: { type: 'string' }, follow: { type: 'boolean' }, server: { type: 'string' }, 'api-key': { type: 'string' } },
  async run({ options, json }) {
    const limit = options.limit === undefined ? 20 : Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new UsageError('--limit must be an integer from 1 to 200', usageOf(eventsTail));
    const type = options.type;
    if (type !== undefined && (typeof type !== 'string' || !(eventTypes as readonly string[]).includes(type))) {
      throw new UsageError(`--type must be one of ${eventTypes.join(', ')}`, usageOf(eventsTail));
    }
    const client = await SvcClient.open({
      ...(typeof options['api-key'] === 'string' ? { apiKey: options['api-key'] } : {}),
      ...(typeof options.server === 'string' ? { gatewayBaseUrl: options.server } : {}),
    });
    const query = { limit, ...(type ? { type: type as EventType } : {}) };
    const show = (event: { id: string; type: string; created_at: string; data: { object: Record<string, unknown> } }) => {
      const object = event.data.object;
      const subject = String(object.intent_id ?? object.key_id ?? object.job_id ?? object.id ?? object.object ?? '');
      process.stdout.write(json ? `${JSON.stringify(event)}\n` : `${event.created_at}  ${event.type.padEnd(26)} ${subject}  ${event.id}\n`);
    };
    const first = await client.events.list(query);
    for (const event of [...first.data].reverse()) show(event);
    let newest = first.data[0]?.id;
    while (options.follow === true) {
      await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
      // Newest first: read back to the newest one printed, then print the new ones oldest first.
      const fresh = [];
      let cursor: string | undefined;
      reading: for (;;) {
        const page = await client.events.list({ ...query, limit: 200, ...(cursor ? { cursor } : {}) });
        for (const event of page.data) {
          if (event.id === newest) break reading;
          fresh.push(event);
        }
        if (!page.has_more || newest === undefined) break;
        cursor = page.next_cursor ?? undefined;
      }
      for (const event of fresh.reverse()) show(event);
      newest = fresh.at(-1)?.id ?? newest;
    }
  },
};
