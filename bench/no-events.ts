// A preload for the baseline service of the events bench (events-bench.ts): `node --import tsx --import
// ./bench/no-events.ts src/server.ts` runs the service as it is, except that the two modules that write events resolve
// to bench/no-events-modules/ instead: src/db/event-repository.ts with a recordEvent that queues nothing, and
// src/engine/intent-events.ts whose functions build and queue nothing. So the baseline is the same service composed
// without writing events (neither the event's object built nor its row and deliveries sent with the COMMIT), and the
// events' cost is the difference between the two. Bench-only: nothing in src/ knows of it, and no setting of the
// product turns events off.
import { register } from 'node:module';

register('./no-events-hooks.mjs', import.meta.url);
