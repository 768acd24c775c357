import type { LockEngine } from '../engine/lock-engine.js';
import { sleep } from '../util/clock.js';
import type { Lock } from '../engine/lock.js';
import { leadershipKey, type AfterTask, type Leadership, type LeadershipChange } from './leadership.js';

/** Where a campaign reports what it cannot throw (it runs in the background). */
export interface CampaignReporter {
  change(change: LeadershipChange): void;
  taskFailed(error: unknown): void;
  storeFailed(error: unknown, retryInMs: number): void;
}

interface CampaignSettings {
  readonly name: string;
  readonly task: (leadership: Leadership) => unknown;
  readonly leaseMs: number | undefined;
  readonly afterTask: AfterTask;
}

/** First pause after a store error before campaigning again; it doubles up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 5_000;
/**
 * After giving up leadership on purpose, how long an instance on a store without a FIFO queue (SQL)
 * waits before campaigning again, so that a waiting follower (polling at most every 200 ms) takes over
 * instead of the instance that just resigned.
 */
export const UNFAIR_REJOIN_DELAY_MS = 1_000;
/** Pause after a task that threw, so a task failing at once does not spin through terms. */
const TASK_FAILURE_PAUSE_MS = 1_000;

/**
 * One instance's campaign for one leadership: waits (without a deadline) for the lock
 * `leader:{name}`, runs the task while holding it (the engine renews it), and gives it up when the
 * task returns, on `resign()` or `stop()`. A lost lock aborts the task's signal at once; the
 * campaign then waits for the task to settle before campaigning again, so one instance never runs
 * two terms of one name at a time.
 */
export class LeaderCampaign {
  private readonly stopping = new AbortController();
  private lock: Lock | undefined;
  /** Aborted when the current term ends: before the lock is released, so this instance stops believing it leads before a follower can start. */
  private term: AbortController | undefined;
  private current: Leadership | undefined;
  private readonly running: Promise<void>;

  constructor(
    private readonly engine: LockEngine,
    private readonly settings: CampaignSettings,
    private readonly reporter: CampaignReporter,
  ) {
    this.running = this.campaign();
  }

  /** This instance leads now: it holds the lock and its signal has not aborted. */
  get leading(): boolean {
    return this.term !== undefined && !this.term.signal.aborted;
  }

  /** The current term, while leading. */
  get leadership(): Leadership | undefined {
    return this.leading ? this.current : undefined;
  }

  get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  /** Gives up the current term, if any (its signal aborts, the lock is released); the campaign goes on. */
  async resign(): Promise<void> {
    const lock = this.lock;
    if (!lock || !this.term) return;
    this.term.abort(new DOMException(`Leadership "${this.settings.name}" was given up`, 'AbortError'));
    await lock.release().catch(() => undefined);
  }

  /** Resigns and stops campaigning. A task that ignores its aborted signal is not waited for. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.resign();
    await this.running;
  }

  private async campaign(): Promise<void> {
    const stop = this.stopping.signal;
    const fair = this.engine.supports('fair');
    let retryMs = FIRST_RETRY_MS;
    while (!stop.aborted && !this.engine.isClosed) {
      let lock: Lock;
      try {
        lock = await this.engine.acquire(leadershipKey(this.settings.name), {
          leaseMs: this.settings.leaseMs,
          waitMs: Infinity,
          fair,
          signal: stop,
          label: 'leader',
        });
      } catch (error) {
        if (stop.aborted || this.engine.isClosed) break;
        this.reporter.storeFailed(error, retryMs);
        await sleep(retryMs, stop);
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
        continue;
      }
      retryMs = FIRST_RETRY_MS;
      if (stop.aborted) {
        // Granted as the campaign stopped: never start a term nobody will end.
        await lock.release().catch(() => undefined);
        break;
      }
      const outcome = await this.lead(lock);
      if (outcome === 'returned' && this.settings.afterTask === 'stop') break;
      const lost = lock.signal.reason instanceof Error && lock.signal.reason.name === 'LockLostError';
      const pause = outcome === 'threw' ? TASK_FAILURE_PAUSE_MS : !fair && !lost ? UNFAIR_REJOIN_DELAY_MS : 0;
      if (pause > 0) await sleep(pause, stop);
    }
    this.stopping.abort();
  }

  /** One term: runs the task holding `lock`; resolves how the task ended, once it has (or once the campaign stops). */
  private async lead(lock: Lock): Promise<'returned' | 'threw'> {
    const { name, task } = this.settings;
    const term = new AbortController();
    const signal = term.signal;
    const leadership: Leadership = { name, term: lock.fence, signal, since: Date.now() };
    this.lock = lock;
    this.term = term;
    this.current = leadership;
    this.reporter.change({ leader: true, term: lock.fence });
    signal.addEventListener('abort', () => this.reporter.change({ leader: false }), { once: true });
    const onLost = () => term.abort(lock.signal.reason);
    if (lock.signal.aborted) onLost();
    else lock.signal.addEventListener('abort', onLost, { once: true });
    let outcome: 'returned' | 'threw' = 'returned';
    const settled = (async () => {
      try {
        await task(leadership);
      } catch (error) {
        outcome = 'threw';
        if (!signal.aborted) this.reporter.taskFailed(error);
      }
    })();
    let onStop = (): void => undefined;
    const stopped = new Promise<void>((resolve) => (onStop = resolve));
    if (this.stopping.signal.aborted) onStop();
    else this.stopping.signal.addEventListener('abort', onStop, { once: true });
    try {
      await Promise.race([settled, stopped]);
    } finally {
      this.stopping.signal.removeEventListener('abort', onStop);
    }
    await this.resign();
    this.lock = undefined;
    this.term = undefined;
    this.current = undefined;
    return outcome;
  }
}
