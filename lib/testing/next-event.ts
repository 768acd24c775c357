import type { LockEngine } from '../engine/lock-engine.js';
import type { LockEvent } from '../engine/lock-events.js';

/** The engine's next event of `type` (from now on). */
export function nextEvent(engine: LockEngine, type: LockEvent['type']): Promise<LockEvent> {
  return new Promise((resolve) => {
    const subscription = engine.events.subscribe((event) => {
      if (event.type !== type) return;
      subscription.unsubscribe();
      resolve(event);
    });
  });
}
