import { InvalidLockArgumentError } from '../errors.js';
import { MAX_TIMER_MS } from '../util/clock.js';
import { describe } from './lock-options.js';

/** How a `LockEngine` closes: see `LockEngine.close()`. */
export interface CloseOptions {
  /**
   * How long, in ms, the locks still held may go on being used before they are revoked (their
   * signals abort with LockLostError) and released. Default 0: revoked at once.
   */
  gracefulMs?: number;
}

/** A drain bound: a finite number of ms from 0 to the longest timer. */
export function checkGracefulMs(value: unknown, what = 'gracefulMs'): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMER_MS) {
    throw new InvalidLockArgumentError(
      `${what} must be a finite number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * @internal The graceful part of closing an engine: resolves once the engine holds no lock (its
 * `check()` is called each time a lease ends) or the bound passes, whichever comes first. A later
 * `shorten()` with a smaller bound ends it sooner.
 */
export class Drain {
  private finish: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private deadline = Infinity;
  readonly done: Promise<void>;

  constructor(
    private readonly isEmpty: () => boolean,
    gracefulMs: number,
  ) {
    this.done = new Promise<void>((resolve) => (this.finish = resolve));
    this.shorten(gracefulMs);
    this.check();
  }

  /** A lease ended: done when it was the last one. */
  check(): void {
    if (this.finish && this.isEmpty()) this.end();
  }

  /** Ends the drain `gracefulMs` from now, if that is sooner than its current bound. */
  shorten(gracefulMs: number): void {
    const deadline = performance.now() + gracefulMs;
    if (!this.finish || deadline >= this.deadline) return;
    if (gracefulMs === 0) return this.end();
    this.deadline = deadline;
    clearTimeout(this.timer);
    // Not unref'd: closing is waiting on it, and it is bounded.
    this.timer = setTimeout(() => this.end(), gracefulMs);
  }

  private end(): void {
    clearTimeout(this.timer);
    const finish = this.finish;
    this.finish = undefined;
    finish?.();
  }
}
