import type { LockEngine, LockEvent } from '../../lib/index.js';

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
