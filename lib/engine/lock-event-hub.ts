import { Subject, type Observable } from 'rxjs';
import type { LockEvent, LockEventType } from './lock-events.js';

/** @internal A listener of some event types only (see {@link LockEventHub.listen}). */
export type LockEventListener = (event: LockEvent) => void;

/**
 * @internal Where an engine's events go: to the subscribers of `events` (every type), and to
 * listeners of a few types. An event is worth building only when `wants(type)` says someone gets
 * it: a listener of the warnings alone (LockService's log) leaves the acquire/release path
 * building nothing.
 */
export class LockEventHub {
  private readonly subject = new Subject<LockEvent>();
  private readonly listeners = new Map<LockEventType, LockEventListener[]>();
  /** Every event, for subscribers. Never errors; completes on `complete()`. */
  readonly events: Observable<LockEvent> = this.subject.asObservable();

  /** Someone gets events of `type`. */
  wants(type: LockEventType): boolean {
    return this.subject.observed || (this.listeners.size > 0 && this.listeners.has(type));
  }

  emit(event: LockEvent): void {
    const listeners = this.listeners.size > 0 ? this.listeners.get(event.type) : undefined;
    if (listeners) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch {
          // Events are emitted from timers too, which must never throw.
        }
      }
    }
    if (this.subject.observed) this.subject.next(event);
  }

  /** Calls `listener` with the events of `types` only; returns a function that stops it. */
  listen(types: readonly LockEventType[], listener: LockEventListener): () => void {
    for (const type of types) this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
    return () => {
      for (const type of types) {
        const rest = (this.listeners.get(type) ?? []).filter((other) => other !== listener);
        if (rest.length > 0) this.listeners.set(type, rest);
        else this.listeners.delete(type);
      }
    };
  }

  /** No more events: `events` completes, listeners are dropped. */
  complete(): void {
    this.listeners.clear();
    this.subject.complete();
  }
}
