import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { QUEUE_REFRESH_MS, refreshQueuePlace } from './wait-queue.js';

/** @internal A waiter's place in a lock's queue. */
export interface QueuePlace {
  readonly keys: RedisLockKeys;
  readonly entry: string;
}

/**
 * @internal Keeps the queue places of a backend's waiting claims alive: one unref'ed timer for all
 * of them, running only while some claim queues. A waiter whose process dies stops refreshing, so
 * its place lapses and stops holding the queue back. Never throws: a failed refresh is retried on
 * the next tick (and a lapsed place is taken again, at the end, by the waiter's next attempt).
 */
export class QueueHeartbeat {
  private readonly places = new Set<QueuePlace>();
  private timer: NodeJS.Timeout | undefined;
  private beating = false;

  constructor(
    private readonly client: RedisClient,
    /** Registers a command in flight, so that closing the backend can let it settle first. */
    private readonly track: <T>(command: Promise<T>) => Promise<T>,
  ) {}

  add(place: QueuePlace): void {
    this.places.add(place);
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat(), QUEUE_REFRESH_MS);
    this.timer.unref?.();
  }

  delete(place: QueuePlace): void {
    this.places.delete(place);
    if (this.places.size === 0) this.stop();
  }

  close(): void {
    this.places.clear();
    this.stop();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async beat(): Promise<void> {
    // A slow store must not pile refreshes up.
    if (this.beating) return;
    this.beating = true;
    try {
      await Promise.allSettled(
        [...this.places].map((place) => this.track(refreshQueuePlace(this.client, place.keys, place.entry))),
      );
    } finally {
      this.beating = false;
    }
  }
}
