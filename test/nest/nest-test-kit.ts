import type { LockEvent, LockService } from '../../lib/index.js';
import type { ClaimRequest, LockBackend } from '../../lib/backend.js';
import { MemoryBackend } from '../../lib/index.js';

/** A promise with its resolve function outside, to hold a method open until the test says so. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A memory store that records the store keys it is asked for and whether it was closed. */
export class RecordingBackend implements LockBackend {
  readonly name = 'recording';
  readonly store = new MemoryBackend();
  readonly keys: string[] = [];
  closed = false;

  claim(request: ClaimRequest) {
    this.keys.push(request.key);
    return this.store.claim(request);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A store that is down: every attempt rejects, as a refused connection would. */
export const unreachableBackend: LockBackend = {
  name: 'unreachable',
  claim: () => ({
    tryAcquire: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:6379')),
    waitForChange: async () => undefined,
    renew: async () => false,
    release: async () => true,
  }),
  close: async () => undefined,
};

/** Collects the service's events until the test reads them. */
export function collectEvents(locks: LockService): LockEvent[] {
  const events: LockEvent[] = [];
  locks.events.subscribe((event) => events.push(event));
  return events;
}

/** One turn of the event loop: lets a non-atomic read-modify-write interleave with other calls. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Resolves the next event of the service that matches, for a test to wait on instead of sleeping. */
export function nextEvent(locks: LockService, matches: (event: LockEvent) => boolean): Promise<LockEvent> {
  return new Promise((resolve) => {
    const subscription = locks.events.subscribe((event) => {
      if (!matches(event)) return;
      subscription.unsubscribe();
      resolve(event);
    });
  });
}
