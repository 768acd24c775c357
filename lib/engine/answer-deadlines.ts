import { monotonicNow } from '../util/clock.js';
import { SlotSet, type Slotted } from '../util/slot-set.js';

/** How often, at most, the shared timer looks for overdue store calls while some are in flight. */
export const DEADLINE_TICK_MS = 25;

/**
 * How long before its bound a call is given up: what the caller needs, once the timer ran, to
 * settle its own answer (give an attempt back, build the error), so that the answer comes by the bound.
 */
export const ANSWER_MARGIN_MS = 10;

/**
 * A `waitMs` ends at most this long after it was due when the store's answer is still on its way
 * (a wait is never cut while the answer is merely slow by less than this, less `ANSWER_MARGIN_MS`).
 */
export const WAIT_GRACE_MS = 100;

/** The least time any acquisition (even `waitMs: 0`) gives the store to answer, counted from the call. */
export const MIN_ATTEMPT_MS = 2_000;

/** How long `release()` waits for the store to answer before it rejects with LockBackendError. */
export const RELEASE_TIMEOUT_MS = 3_000;

/** How long `close()` waits, in all, for held locks' releases, acquisitions in flight and the store's clients to close. */
export const CLOSE_TIMEOUT_MS = 3_000;

/** @internal The rejection of {@link AnswerDeadlines.within} when the store did not answer in time. */
export const OVERDUE: unique symbol = Symbol('overdue');

/** One store call being watched: settles the caller's promise with the call's answer, or with OVERDUE at its deadline. */
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
 * @internal Bounds store calls by their callers' bounds with one timer per engine, armed only while
 * calls are in flight: no timer per call on the fast path, where the answer comes in microseconds.
 * The timer runs every `DEADLINE_TICK_MS`, or sooner when a call is due before that, so that a call
 * is given up `ANSWER_MARGIN_MS` before its bound, never after it. The store call itself is not
 * cancelled; its caller just stops waiting for it.
 */
export class AnswerDeadlines {
  private readonly pending = new SlotSet<Watched<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer is due (monotonic ms). */
  private timerDueAt = Infinity;

  /** Settles as `call` does, or rejects with {@link OVERDUE} when it has not settled `ANSWER_MARGIN_MS` before `bound` (monotonic ms). */
  within<T>(call: Promise<T>, bound: number): Promise<T> {
    const watched = new Watched<T>(bound - ANSWER_MARGIN_MS, this.pending);
    made = watched as Watched<unknown>;
    const answer = new Promise<T>(takeResolvers);
    made = undefined;
    this.pending.add(watched as Watched<unknown>);
    if (this.timer === undefined || watched.deadline < this.timerDueAt) this.arm(watched.deadline, monotonicNow());
    call.then(watched.answered, watched.failed);
    return answer;
  }

  /** Stops the timer when nothing is left to watch (a call still watched keeps its deadline). */
  stopIfIdle(): void {
    if (this.pending.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Infinity;
  }

  /** Arms the timer for the next look: in a tick, or at `earliest` if that comes first. */
  private arm(earliest: number, now: number): void {
    clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(DEADLINE_TICK_MS, earliest - now));
    this.timerDueAt = now + delay;
    this.timer = setTimeout(this.tick, delay);
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
