import { monotonicNow } from './clock.js';
import { SlotSet, type Slotted } from './slot-set.js';

/** How often the shared timer looks for overdue store calls: a call is given up at most this late. */
export const DEADLINE_TICK_MS = 25;

/**
 * A `waitMs` ends at most this long after it was due when the store's answer is still on its way
 * (a wait is never cut while the answer is merely slow by less than this).
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
 * @internal Bounds store calls by their callers' deadlines with one coarse timer per engine, armed
 * only while calls are in flight: no timer per call on the fast path, where the answer comes in
 * microseconds. The store call itself is not cancelled; its caller just stops waiting for it.
 */
export class AnswerDeadlines {
  private readonly pending = new SlotSet<Watched<unknown>>();
  private timer: NodeJS.Timeout | undefined;

  /** Settles as `call` does, or rejects with {@link OVERDUE} when it has not settled by `deadline` (monotonic ms). */
  within<T>(call: Promise<T>, deadline: number): Promise<T> {
    const watched = new Watched<T>(deadline, this.pending);
    made = watched as Watched<unknown>;
    const answer = new Promise<T>(takeResolvers);
    made = undefined;
    this.pending.add(watched as Watched<unknown>);
    this.timer ??= setTimeout(this.tick, DEADLINE_TICK_MS);
    call.then(watched.answered, watched.failed);
    return answer;
  }

  /** Stops the timer when nothing is left to watch (a call still watched keeps its deadline). */
  stopIfIdle(): void {
    if (this.pending.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    const now = monotonicNow();
    for (const watched of this.pending.toArray()) {
      if (watched.deadline > now) continue;
      this.pending.delete(watched);
      watched.reject(OVERDUE);
    }
    if (this.pending.size > 0) this.timer = setTimeout(this.tick, DEADLINE_TICK_MS);
  };
}
