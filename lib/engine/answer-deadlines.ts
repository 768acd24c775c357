import { TimeLimits } from '../util/time-limit.js';

/**
 * How long before its bound a call is given up: what the caller needs, once the timer ran, to
 * settle its own answer (give an attempt back, build the error, close the clients after the last
 * release given up), so that the answer comes by the bound also when a busy event loop runs the
 * timer late. 10 ms was not enough: `close()` of an unreachable MySQL answered 12 ms after.
 */
const ANSWER_MARGIN_MS = 50;

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

/**
 * @internal The engine's bound on store calls: a call is given up `ANSWER_MARGIN_MS` before its
 * caller's bound, so that the caller's answer still comes by it (see {@link TimeLimits}).
 */
export class AnswerDeadlines extends TimeLimits {
  constructor() {
    super(ANSWER_MARGIN_MS);
  }
}
