import type { Observable, Subscription } from 'rxjs';
import type { LockEvent } from '../engine/lock-events.js';

/** A lock event as the page gets it: JSON, with the time it happened (epoch ms) and errors as their message. */
export type AdminEventJson = Record<string, unknown> & {
  readonly type: string;
  readonly key: string;
  readonly at: number;
};

/** Events kept for the detail view and the hot keys panel. */
const KEPT = 2_000;

/** A lock event as JSON: `at` added, `error` as its message. */
export function eventJson(event: LockEvent): AdminEventJson {
  const { error, ...rest } = event as LockEvent & { error?: Error };
  return { ...rest, at: Date.now(), ...(error ? { error: error.message } : {}) };
}

/**
 * This instance's recent lock events of one store, newest last: what the page shows of a key's
 * history and of the hot keys. Renewals (`extended`) are not kept: they would crowd out the rest.
 */
export class AdminEventLog {
  private readonly events: AdminEventJson[] = [];
  private readonly subscription: Subscription;

  constructor(source: Observable<LockEvent>) {
    this.subscription = source.subscribe((event) => {
      if (event.type === 'extended') return;
      this.events.push(eventJson(event));
      if (this.events.length > KEPT) this.events.splice(0, this.events.length - KEPT);
    });
  }

  /** The kept events, oldest first; of one key when `key` is given. */
  recent(key?: string): AdminEventJson[] {
    return key === undefined ? [...this.events] : this.events.filter((event) => event.key === key);
  }

  close(): void {
    this.subscription.unsubscribe();
  }
}
