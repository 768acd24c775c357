import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { LockEngine } from '../engine/lock-engine.js';
import type { LockEvent } from '../engine/lock-events.js';
import type { Lock, LockOptions } from '../engine/lock.js';
import type { ForceReleaseOptions, ListLocksOptions, LockInfo, LockList } from '../engine/lock-info.js';
import { LOCK_ENGINE } from './lock-constants.js';
import { Messages } from './lock-messages.js';

/**
 * Distributed locks for code that does not fit `@Locked()`. Injectable wherever the module is
 * visible; a named store's with `@InjectLockService(name)`.
 */
@Injectable()
export class LockService {
  private readonly logger = new Logger('DistributedLock');

  /**
   * Every acquisition, release, renewal, failed renewal, loss and timeout of this module's locks,
   * with the caller's key (no prefix): for logs, metrics and alerts. Never errors; completes when
   * the application shuts down. Lost locks are also logged as warnings.
   */
  readonly events: Observable<LockEvent>;

  constructor(@Inject(LOCK_ENGINE) private readonly engine: LockEngine) {
    this.events = engine.events;
    // Only the warnings: a subscription to `events` would have every acquisition and release build its event.
    engine.listen(['lost', 'release-failed', 'self-wait', 'force-released'], (event) => {
      if (event.type === 'lost') this.logger.warn(Messages.lockLost(event.key, event.fence, event.error.message));
      else if (event.type === 'release-failed')
        this.logger.warn(Messages.releaseFailed(event.key, event.fence, event.error.message));
      else if (event.type === 'self-wait') this.logger.warn(Messages.selfWait(event.key, event.waitedMs));
      else if (event.type === 'force-released')
        this.logger.warn(Messages.forceReleased(event.key, event.by, event.reason, event.evicted.length, event.actor));
    });
  }

  /** The store's name: `'default'`, or the `name` given to `forRoot()`. */
  get name(): string {
    return this.engine.name;
  }

  /** This app instance's label (`hostname:pid` unless the module was given an `instance`), as in `skipped` events. */
  get instance(): string {
    return this.engine.instance;
  }

  /**
   * Waits up to `waitMs` (default: the module's) for the lock; rejects with LockTimeoutError if it stays busy.
   *
   * Given a list of keys, takes all of them or none, in sorted order (so callers locking the same
   * keys in different orders cannot deadlock), within one `waitMs` for the whole list; a busy key
   * releases the ones already taken and rejects LockTimeoutError naming it. Two or more distinct
   * keys resolve one `MultiLock` (`keys`, `fences`; narrow with `isMultiLock`); see docs/multi-key-locks.md.
   *
   * ```ts
   * await using lock = await locks.acquire([`account:${from}`, `account:${to}`]);
   * ```
   */
  acquire(key: string | readonly string[], options?: LockOptions): Promise<Lock> {
    return this.engine.acquire(key, options);
  }

  /** One attempt, never waits: the lock, or `null` when it is busy (for a list: when any key is; then none is held). */
  tryAcquire(key: string | readonly string[], options?: LockOptions): Promise<Lock | null> {
    return this.engine.tryAcquire(key, options);
  }

  /**
   * Takes one of the `permits` permits of the counting semaphore `key` (at most `permits` holders
   * at once), waiting up to `waitMs`; rejects with LockTimeoutError while all are taken. The permit
   * is a `Lock`: leased, renewed, lost and released like one. Same as `acquire(key, { ...options, permits })`.
   *
   * ```ts
   * const permit = await locks.semaphore('exports', 3);
   * try { await runExport(permit.signal); } finally { await permit.release(); }
   * ```
   */
  semaphore(key: string, permits: number, options?: LockOptions): Promise<Lock> {
    return this.engine.semaphore(key, permits, options);
  }

  /**
   * Runs `fn` holding the lock (as `current()`, re-entrant inside it) and releases it after, even if `fn` throws.
   * With a list of keys, `fn` holds all of them; each is re-entrant inside it.
   */
  withLock<T>(key: string | readonly string[], fn: (lock: Lock) => T | Promise<T>, options?: LockOptions): Promise<T> {
    return this.engine.withLock(key, fn, options);
  }

  /**
   * Runs `fn` with `lock` (from `acquire()`) as the current lock of its call chain, without
   * releasing it: nested `withLock()`, `@Locked()` and `acquire()` calls on its key inside are
   * re-entrant. Needed because an async function cannot change its caller's async context: after
   * `await locks.acquire('k')`, a nested call on `'k'` in the same function outside `run()` waits
   * for the lock it already holds (a `self-wait` warning says so after a second).
   *
   * ```ts
   * await using lock = await locks.acquire('report');
   * await locks.run(lock, () => this.build()); // build() may lock 'report' again
   * ```
   */
  run<T>(lock: Lock, fn: (lock: Lock) => T): T {
    return this.engine.run(lock, fn);
  }

  /**
   * What the store says about `key` now (no prefix): whether it is held, in which mode, by whom
   * (instance, label, fence, remaining lease), how many wait, and its semaphore. One bounded read.
   * What each store cannot know is listed in docs/operations.md.
   */
  inspect(key: string): Promise<LockInfo> {
    return this.engine.inspect(key);
  }

  /**
   * One page of the held (or waited-for) locks whose key starts with `prefix`, at most `limit`
   * (default 100). Pass the page's `cursor` to get the next; it is absent on the last page. Each
   * page is one bounded read of the store (Redis SCAN with COUNT, SQL LIMIT, etcd range limit).
   */
  list(options?: ListLocksOptions): Promise<LockList> {
    return this.engine.list(options);
  }

  /**
   * Frees `key` whoever holds it, for operators: resolves `false` when nobody held it. The next
   * holder's fence is larger than the evicted holder's, so its fenced writes are refused; the
   * evicted holder's `signal` aborts at its next renewal at the latest. Emits `force-released`
   * (who forced it, `reason`, whom it evicted), also logged as a warning.
   */
  forceRelease(key: string, options?: ForceReleaseOptions): Promise<boolean> {
    return this.engine.forceRelease(key, options);
  }

  /**
   * The innermost lock this async call chain holds (inside `withLock`, `run`, or a `@Locked()`
   * method or handler, streams included), if any; never one its holder has released.
   */
  current(): Lock | undefined {
    return this.engine.current();
  }
}
