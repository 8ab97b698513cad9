// Stand-in for src/db/event-repository.ts in the events bench's baseline service (bench/no-events.ts): the module as
// it is, but recordEvent queues nothing (no event row, no deliveries) and answers a fresh id, as the real one does.
import { newEventId, type NewEvent } from '../../src/db/event-repository.ts';
import type { Queryable } from '../../src/infra/database.ts';

export * from '../../src/db/event-repository.ts';

export function recordEvent(_tx: Queryable, _tenantId: string, _event: NewEvent): string {
  return newEventId();
}
