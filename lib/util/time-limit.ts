import { monotonicNow } from './clock.js';
import { SlotSet, type Slotted } from './slot-set.js';

/** How often, at most, a TimeLimits timer looks for overdue calls while some are in flight. */
const DEADLINE_TICK_MS = 25;

/** @internal The rejection of {@link TimeLimits.within} and {@link withinMs} when the call did not settle in time. */
export const OVERDUE: unique symbol = Symbol('overdue');

/** One call being watched: settles the caller's promise with the call's answer, or with OVERDUE at its deadline. */
class Watched<T> implements Slotted {
  slot = -1;
  resolve!: (value: T) => void;
  reject!: (reason: unknown) => void;

  constructor(
    readonly deadline: number,
    private readonly pending: SlotSet<Watched<unknown>>,
  ) {}

  // Arrow fields: handed to `then` as they are.
  readonly answered = (value: T): void => {
    this.pending.delete(this as Watched<unknown>);
    this.resolve(value);
  };

  readonly failed = (error: unknown): void => {
    this.pending.delete(this as Watched<unknown>);
    this.reject(error);
  };
}

/** The resolving functions of the promise being made: the executor hands them over without a closure per call. */
let made: Pick<Watched<unknown>, 'resolve' | 'reject'> | undefined;
const takeResolvers = (resolve: (value: never) => void, reject: (reason: unknown) => void): void => {
  made!.resolve = resolve as (value: unknown) => void;
  made!.reject = reject;
};

/**
 * @internal The one "wait for a promise, up to a time limit" of the library. Bounds calls with one
 * timer per instance, armed only while calls are in flight: no timer per call on a fast path, where
 * the answer comes in microseconds. The timer runs every `DEADLINE_TICK_MS`, or sooner when a call is
 * due before that, so that a call is given up `marginMs` before its bound, never after it. The call
 * itself is not cancelled, its caller just stops waiting for it; its late rejection is handled here.
 * Never throws from the timer.
 */
export class TimeLimits {
  private readonly pending = new SlotSet<Watched<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer is due (monotonic ms). */
  private timerDueAt = Infinity;

  /**
   * @param marginMs How long before its bound a call is given up.
   * @param keepAlive Whether the timer keeps the process alive while calls are watched.
   */
  constructor(
    private readonly marginMs = 0,
    private keepAlive = true,
  ) {}

  /**
   * Settles as `call` does, or rejects with {@link OVERDUE} when it has not settled `marginMs` before
   * `bound` (monotonic ms), or when `signal` aborts first.
   */
  within<T>(call: Promise<T>, bound: number, signal?: AbortSignal): Promise<T> {
    const watched = new Watched<T>(bound - this.marginMs, this.pending);
    made = watched as Watched<unknown>;
    const answer = new Promise<T>(takeResolvers);
    made = undefined;
    this.pending.add(watched as Watched<unknown>);
    call.then(watched.answered, watched.failed);
    if (this.timer === undefined || watched.deadline < this.timerDueAt) {
      const now = monotonicNow();
      if (watched.deadline > now) this.arm(watched.deadline, now);
      else this.giveUpSoon(watched as Watched<unknown>);
    }
    if (signal !== undefined) this.giveUpOnAbort(watched as Watched<unknown>, answer, signal);
    return answer;
  }

  /** Stops the timer when nothing is left to watch (a call still watched keeps its deadline). */
  stopIfIdle(): void {
    if (this.pending.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Infinity;
  }

  /**
   * A call whose deadline has passed already (the next step of a sequence under one bound) is given
   * up once its own answer, if it has one, has had its turn: within this event-loop turn, not at a
   * timer's next run, which may come after the bound.
   */
  private giveUpSoon(watched: Watched<unknown>): void {
    queueMicrotask(() =>
      queueMicrotask(() => {
        if (this.pending.delete(watched)) watched.reject(OVERDUE);
      }),
    );
  }

  private giveUpOnAbort(watched: Watched<unknown>, answer: Promise<unknown>, signal: AbortSignal): void {
    const giveUp = (): void => {
      if (this.pending.delete(watched)) watched.reject(OVERDUE);
    };
    if (signal.aborted) return giveUp();
    signal.addEventListener('abort', giveUp, { once: true });
    const stopListening = (): void => signal.removeEventListener('abort', giveUp);
    answer.then(stopListening, stopListening);
  }

  /**
   * From now on the timer does not keep the process alive: for an owner that closed, whose calls
   * still watched (to a store that never answered) matter to nobody and end by their deadlines only
   * if the process runs that long for other reasons.
   */
  stopKeepingAlive(): void {
    this.keepAlive = false;
    this.timer?.unref?.();
  }

  /** Arms the timer for the next look: in a tick, or at `earliest` if that comes first. */
  private arm(earliest: number, now: number): void {
    clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(DEADLINE_TICK_MS, earliest - now));
    this.timerDueAt = now + delay;
    this.timer = setTimeout(this.tick, delay);
    if (!this.keepAlive) this.timer.unref?.();
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    this.timerDueAt = Infinity;
    const now = monotonicNow();
    let earliest = Infinity;
    for (const watched of this.pending.toArray()) {
      if (watched.deadline > now) {
        earliest = Math.min(earliest, watched.deadline);
        continue;
      }
      this.pending.delete(watched);
      watched.reject(OVERDUE);
    }
    if (this.pending.size > 0) this.arm(earliest, now);
  };
}

const keepingAlive = new TimeLimits();
const notKeepingAlive = new TimeLimits(0, false);

/**
 * @internal Settles as `call` does, or rejects with {@link OVERDUE} after `ms` (or when `signal`
 * aborts). With `keepAlive: false` the wait does not keep the process alive.
 */
export function withinMs<T>(
  call: Promise<T>,
  ms: number,
  options: { signal?: AbortSignal; keepAlive?: boolean } = {},
): Promise<T> {
  const limits = options.keepAlive === false ? notKeepingAlive : keepingAlive;
  return limits.within(call, monotonicNow() + ms, options.signal);
}
