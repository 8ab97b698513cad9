// Stand-in for src/engine/intent-events.ts in the events bench's baseline service (bench/no-events.ts): an intent's
// transitions and a rail instruction's outcome record no event, and the event's object (the intent as the API shows
// it) is not even built.
import { newEventId } from '../../src/db/event-repository.ts';
import type { Intent } from '../../src/db/intent-repository.ts';
import type { RailInstruction } from '../../src/db/rail-instruction-repository.ts';
import type { IntentEventRefs } from '../../src/engine/intent-events.ts';
import type { IntentEventType } from '../../src/engine/lifecycle.ts';
import type { Queryable } from '../../src/infra/database.ts';

export type { IntentEventRefs };

export function recordIntentTransition(_tx: Queryable, _intent: Intent, _refs: IntentEventRefs = {}): string {
  return newEventId();
}

export function recordIntentEvent(_tx: Queryable, _intent: Intent, _type: IntentEventType, _refs: IntentEventRefs = {}): string {
  return newEventId();
}

export function recordInstructionOutcomeEvent(_tx: Queryable, _instruction: RailInstruction): void {}
