import { monotonicNow } from '../util/clock.js';

/**
 * @internal A lease's `minHoldMs` and `maxHoldMs` as monotonic deadlines, counted from when the
 * store's grant arrived: that is after the store took the key, so a hold kept until `holdUntil`
 * lasts at least `minHoldMs` in the store too.
 */
export class HoldBounds {
  /** No minHoldMs, no maxHoldMs (most leases): one object for all. */
  static readonly NONE = new HoldBounds(0, undefined, undefined);

  /** Until when a release keeps the key taken in the store (0: no minHoldMs). */
  private readonly holdUntil: number;
  /** When renewal stops (Infinity: no maxHoldMs). */
  readonly stopAt: number;

  constructor(
    acquiredAt: number,
    minHoldMs: number | undefined,
    private readonly maxHoldMs: number | undefined,
  ) {
    this.holdUntil = minHoldMs === undefined ? 0 : acquiredAt + minHoldMs;
    this.stopAt = maxHoldMs === undefined ? Infinity : acquiredAt + maxHoldMs;
  }

  /** What is left of minHoldMs, in whole ms (rounded up); undefined when nothing is. */
  remainingHoldMs(): number | undefined {
    const remaining = Math.ceil(this.holdUntil - monotonicNow());
    return remaining > 0 ? remaining : undefined;
  }

  /** The holder's LockLostError reason once maxHoldMs is reached. */
  stopReason(): string {
    return `it was held for maxHoldMs (${this.maxHoldMs} ms): renewal stopped, and the key frees when its lease lapses`;
  }
}
