import { monotonicNow, unrefTimer } from '../util/clock.js';

/** @internal Something the scheduler wakes: a held lease that has a renewal or its lapse due. */
export interface Wakeable {
  wake(): void;
  /** The scheduler's note of this target's pending wake-up (kept on the target: no map lookup per lease). */
  scheduledWake?: ScheduledWake;
}

/** @internal */
export interface ScheduledWake {
  readonly target: Wakeable;
  /** Monotonic time at which the target wants to be woken. */
  readonly due: number;
  /** It may run this early, to share a batch with others (renewals; 0 slack for deadlines). */
  readonly earliest: number;
  cancelled: boolean;
}

/** The most a renewal may move, earlier (to join a batch) or later (behind a batch), in ms. */
export const MAX_SLACK_MS = 50;

/**
 * @internal One timer per engine for every held lease, instead of two per lease. When it fires it
 * wakes every target whose slack window has opened, in the same tick: their renewals reach the
 * store together (the Redis backend sends the scripts of one tick as one pipeline), so 10,000 held locks
 * cost a few batches per renewal interval, not 10,000 timers and round trips.
 *
 * A min-heap ordered by `earliest`, with lazy deletion; the timer is armed at the top entry's
 * `due`, so a target with slack may wake up to MAX_SLACK_MS early or late, never more. A wake-up
 * without slack (a lapse deadline: the lost signal) is also kept in a heap of its own, and the
 * timer is never armed past it: behind a renewal whose window opens first, it would wait for that
 * renewal's `due`.
 */
export class WakeScheduler {
  private heap: ScheduledWake[] = [];
  /** The wake-ups without slack, also in `heap` (for them `earliest` is `due`). */
  private exact: ScheduledWake[] = [];
  /** Targets with a wake-up pending. */
  private live = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Infinity;

  /** Wakes `target` at `due` (monotonic ms), give or take `slackMs` (capped at MAX_SLACK_MS); replaces its previous wake-up. */
  schedule(target: Wakeable, due: number, slackMs = 0): void {
    this.drop(target);
    const entry: ScheduledWake = {
      target,
      due,
      earliest: due - Math.min(Math.max(0, slackMs), MAX_SLACK_MS),
      cancelled: false,
    };
    target.scheduledWake = entry;
    this.live++;
    this.push(this.heap, entry);
    if (entry.earliest === due) this.push(this.exact, entry);
    this.arm();
  }

  cancel(target: Wakeable): void {
    this.drop(target);
    // The timer stays armed when nothing is left: the next lease (on a busy path, a moment later) can
    // reuse it instead of setting one per acquisition; with nothing to wake, it just ends.
    if (this.live === 0) this.heap.length = this.exact.length = 0;
    else if (this.heap.length > 1024 && this.heap.length > 2 * this.live) this.compact();
  }

  /** Stops the timer and forgets every target. */
  close(): void {
    for (const entry of this.heap) this.drop(entry.target);
    this.reset();
  }

  private drop(target: Wakeable): void {
    const entry = target.scheduledWake;
    if (!entry) return;
    entry.cancelled = true;
    target.scheduledWake = undefined;
    this.live--;
  }

  private reset(): void {
    this.heap = [];
    this.exact = [];
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = Infinity;
  }

  private compact(): void {
    const live = (heap: ScheduledWake[]) =>
      heap.filter((entry) => !entry.cancelled).sort((a, b) => a.earliest - b.earliest);
    this.heap = live(this.heap);
    this.exact = live(this.exact);
  }

  private arm(): void {
    while (this.heap.length > 0 && this.heap[0].cancelled) this.pop(this.heap);
    while (this.exact.length > 0 && this.exact[0].cancelled) this.pop(this.exact);
    const top = this.heap[0];
    if (!top) return this.reset();
    const due = Math.min(top.due, this.exact[0]?.due ?? Infinity);
    if (this.timer && this.timerDue <= due) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = unrefTimer(() => this.fire(), due - monotonicNow());
  }

  private fire(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    const now = monotonicNow();
    const ready: Wakeable[] = [];
    while (this.heap.length > 0 && this.heap[0].earliest <= now) {
      const entry = this.pop(this.heap)!;
      if (entry.cancelled) continue;
      this.drop(entry.target);
      ready.push(entry.target);
    }
    for (const target of ready) {
      try {
        target.wake();
      } catch {
        // A timer callback never throws; targets handle their own errors.
      }
    }
    this.arm();
  }

  private push(heap: ScheduledWake[], entry: ScheduledWake): void {
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent].earliest <= entry.earliest) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(heap: ScheduledWake[]): ScheduledWake | undefined {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || !last) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const child = left + 1 < heap.length && heap[left + 1].earliest < heap[left].earliest ? left + 1 : left;
      if (heap[child].earliest >= last.earliest) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
