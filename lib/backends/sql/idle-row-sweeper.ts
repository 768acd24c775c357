import { unrefTimer } from '../../util/clock.js';

/** Rows one sweep statement deletes at most: a short statement, whatever the table's size. */
const SWEEP_BATCH_ROWS = 1_000;
/** Statements one sweep runs at most; it runs the next only when the previous one deleted a full batch. */
const SWEEP_MAX_BATCHES = 10;
/** Longest pause between two sweeps of one backend, whatever `idleKeyTtlMs`. */
const MAX_SWEEP_INTERVAL_MS = 60_000;
/** Shortest pause between two sweeps, for very short `idleKeyTtlMs`. */
const MIN_SWEEP_INTERVAL_MS = 100;

/**
 * Deletes the rows of keys idle for longer than `idleKeyTtlMs`, so the lease table does not grow with
 * every key ever locked. One per backend, started at its first lock, on an unref'ed timer: every
 * `idleKeyTtlMs` (within 0.1..60 s, ±20% so instances spread out) it runs bounded DELETE statements
 * (`prune(limit)` resolves how many rows went), at most SWEEP_MAX_BATCHES x SWEEP_BATCH_ROWS rows per
 * sweep. A failed sweep is dropped silently (the next one retries): it never affects a lock.
 */
export class IdleRowSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;
  private stopped = false;
  private readonly intervalMs: number;

  constructor(
    private readonly prune: (limit: number) => Promise<number>,
    idleKeyTtlMs: number,
  ) {
    this.intervalMs = Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(MIN_SWEEP_INTERVAL_MS, idleKeyTtlMs));
  }

  /** Schedules the sweeps, if not yet scheduled. */
  start(): void {
    if (!this.timer && !this.sweeping && !this.stopped) this.scheduleNext();
  }

  /**
   * Sweeps now, unless a sweep is running (then resolves that one's count). Resolves the rows deleted;
   * never rejects.
   */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = undefined;
      this.scheduleNext();
    });
    return this.sweeping;
  }

  /** No more sweeps; resolves once a running one has settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private async sweepOnce(): Promise<number> {
    let deleted = 0;
    try {
      for (let batch = 0; batch < SWEEP_MAX_BATCHES && !this.stopped; batch++) {
        const rows = await this.prune(SWEEP_BATCH_ROWS);
        deleted += rows;
        if (rows < SWEEP_BATCH_ROWS) break;
      }
    } catch {
      // The database is down or busy: the next sweep tries again.
    }
    return deleted;
  }

  private scheduleNext(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped) return;
    const jitter = 0.8 + Math.random() * 0.4;
    this.timer = unrefTimer(() => {
      this.timer = undefined;
      void this.sweep();
    }, this.intervalMs * jitter);
  }
}
