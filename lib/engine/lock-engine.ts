import { setMaxListeners } from 'node:events';
import type { Observable } from 'rxjs';
import {
  InvalidLockArgumentError,
  LockBackendError,
  LockLostError,
  LockShuttingDownError,
  LockTimeoutError,
} from '../errors.js';
import type { AttemptResult, BackendCapabilities, LockBackend, LockClaim } from './lock-backend.js';
import { AnswerDeadlines, CLOSE_TIMEOUT_MS, MIN_ATTEMPT_MS, WAIT_GRACE_MS } from './answer-deadlines.js';
import { OVERDUE } from '../util/time-limit.js';
import { monotonicNow } from '../util/clock.js';
import { CheckedLockOptions, refusalOf } from './checked-lock-options.js';
import { checkGracefulMs, Drain, type CloseOptions } from './drain.js';
import { InFlight } from '../util/in-flight.js';
import { Lease, type LeaseOwner } from './lease.js';
import { LockEventHub, type LockEventListener } from './lock-event-hub.js';
import type { LockEvent, LockEventType } from './lock-events.js';
import { LockHandle } from './lock-handle.js';
import type { ForceReleaseOptions, ListLocksOptions, LockInfo, LockList } from './lock-info.js';
import { LockInspector } from './lock-inspector.js';
import { isShared } from './lock-mode.js';
import {
  assertKey,
  checkLeaseMs,
  capWait,
  checkWaitMs,
  describe as describeValue,
  resolveLockOptions,
  type ResolvedLockOptions,
} from './lock-options.js';
import {
  currentLock,
  currentScope,
  findHeldLease,
  holdsAnyLock,
  runInScope,
  runInScopes,
  type LockScope,
} from './lock-scope.js';
import type { Lock, LockOptions } from './lock.js';
import { acquireAll } from './multi-lock.js';
import { RecentHolds } from './recent-holds.js';
import { MultiLockHandle } from './multi-lock-handle.js';
import { defaultInstanceLabel, holderOwnerId, ownerIdPrefix } from './holder-identity.js';
import { SlotSet } from '../util/slot-set.js';
import { WakeScheduler } from './wake-scheduler.js';
import { GrantWaiter, UnansweredAttempt, type Unscoped } from './wait-for-grant.js';

/** Options of a `LockEngine` (the module builds one per store from its options). */
export interface LockEngineOptions {
  /** The store's name in events, metrics and health results. Default `'default'`. */
  name?: string;
  /** Names this app instance to operators (holders, leaders). Default `hostname:pid`. */
  instance?: string;
  /** Prepended to every key in the store. Default `'lock:'`. */
  keyPrefix?: string;
  /** Default lease. Default 30 000 ms. */
  leaseMs?: number;
  /** Default wait for a busy lock; 0 = one attempt. Default 10 000 ms. */
  waitMs?: number;
  /** Caps every wait, the default and each call's `waitMs` (tests: short waits without editing the code). Default: no cap. */
  maxWaitMs?: number;
}

/** The default `keyPrefix`: `'lock:'`. */
export const DEFAULT_KEY_PREFIX = 'lock:';
/** The default `leaseMs`: 30 s, renewed every 10 s while held. */
export const DEFAULT_LEASE_MS = 30_000;
/** The default `waitMs`: 10 s. */
export const DEFAULT_WAIT_MS = 10_000;

/** @internal How long a call waits for a lock its own call chain seems to hold before a `self-wait` event says so. */
export const SELF_WAIT_NOTICE_MS = 1_000;

/**
 * The store-independent lock logic: waiting, renewal, re-entrancy, events and shutdown.
 * `LockService` is a thin Nest wrapper around it; it can also be used without Nest.
 */
export class LockEngine {
  /** The store's name (`'default'` unless the module was given a `name`). */
  readonly name: string;
  /** This app instance's label (`hostname:pid` unless set). */
  readonly instance: string;
  /** Prepended to every key in the store. */
  readonly keyPrefix: string;
  /** The default lease of an acquisition, in ms. */
  readonly leaseMs: number;
  /** The default wait for a busy lock, in ms. */
  readonly waitMs: number;
  /** The cap on every wait, when one was set. */
  readonly maxWaitMs: number | undefined;
  private readonly hub = new LockEventHub();
  private readonly leases = new SlotSet<Lease>();
  /** Aborted when close() is called: no new lock (but for work under way, see refuseWhileClosing). */
  private readonly draining = new AbortController();
  /** Aborted when the drain ends: held locks are revoked, every wait stops. */
  private readonly shutdown = new AbortController();
  private drain: Drain | undefined;
  /** Acquisitions on their way (waiting for a busy lock, or granted and not filed yet): the drain lets them finish, close() waits for them. */
  private waiting = 0;
  /** Set while close() waits for `waiting` to reach 0. */
  private noneWaiting: (() => void) | undefined;
  /**
   * The store calls this engine made that their callers no longer await: claims given back, releases
   * still unanswered, the releases of lost locks. close() lets them settle before the store's clients
   * close (the calls awaited are counted by `waiting` and the held leases; renewals, by the store's own count).
   */
  private readonly calls = new InFlight();
  private closing: Promise<void> | undefined;
  private readonly leaseOwner: LeaseOwner;
  /** The start of every owner id this engine makes: its instance label, escaped (holder-identity.ts). */
  private readonly ownerPrefix: string;
  /** By store key: locks `acquire()` handed out that no scope entered (see `self-wait` events). */
  private readonly unscoped = new Map<string, Unscoped>();
  private readonly inspector: LockInspector;
  /** This instance's last hold times per key, for `LockTimeoutError.likelyFreeInMs`. */
  private readonly recentHolds = new RecentHolds();
  /** Bounds each store call by its caller's deadline (one shared timer). */
  private readonly deadlines = new AnswerDeadlines();
  /** The wait for a busy lock (wait-for-grant.ts). */
  private readonly waiter: GrantWaiter;

  /** Every acquisition, release, renewal, loss and timeout. Never errors; completes on close. */
  readonly events: Observable<LockEvent> = this.hub.events;

  constructor(
    /** The store this engine locks in. */
    readonly backend: LockBackend,
    options: LockEngineOptions = {},
  ) {
    this.name = checkLabel(options.name ?? 'default', 'name');
    this.instance = checkLabel(options.instance ?? defaultInstanceLabel(), 'instance');
    this.ownerPrefix = ownerIdPrefix(this.instance);
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    if (typeof this.keyPrefix !== 'string') throw new InvalidLockArgumentError('keyPrefix must be a string');
    this.leaseMs = options.leaseMs === undefined ? DEFAULT_LEASE_MS : checkLeaseMs(options.leaseMs);
    this.maxWaitMs = options.maxWaitMs === undefined ? undefined : checkWaitMs(options.maxWaitMs, 'maxWaitMs');
    this.waitMs = capWait(options.waitMs === undefined ? DEFAULT_WAIT_MS : checkWaitMs(options.waitMs), this.maxWaitMs);
    this.inspector = new LockInspector(backend.name, backend.inspection, this.keyPrefix);
    // Every waiting acquisition listens to it: any number of listeners is expected, not a leak.
    setMaxListeners(0, this.shutdown.signal);
    const hub = this.hub;
    this.leaseOwner = {
      backendName: backend.name,
      backendAddress: backend.address,
      storeName: this.name,
      emit: (event) => hub.emit(event),
      wants: (type) => hub.wants(type),
      forget: (lease) => {
        this.leases.delete(lease);
        if (this.unscoped.get(lease.storeKey)?.lease === lease) this.unscoped.delete(lease.storeKey);
        if (this.drain !== undefined) this.drain.check();
      },
      noteHeld: (key, heldMs) => this.recentHolds.record(key, heldMs),
      scheduler: new WakeScheduler(),
      deadlines: this.deadlines,
      calls: this.calls,
    };
    this.waiter = new GrantWaiter({
      backend,
      storeName: this.name,
      hub,
      deadlines: this.deadlines,
      calls: this.calls,
      shutdown: this.shutdown.signal,
      newLease: (key, storeKey, claim, options, fence, attemptStartedAt, validityMs) =>
        this.newLease(key, storeKey, claim, options, fence, attemptStartedAt, validityMs),
      likelyFreeInMs: (key, storeKey, seenTakenMs) => this.likelyFreeInMs(key, storeKey, seenTakenMs),
      heldBySameChain: (storeKey) => this.heldBySameChain(storeKey),
      noticeSelfWait: (key, held, startedAt) => this.noticeSelfWait(key, held, startedAt),
    });
  }

  /**
   * Waits up to `waitMs` for the lock; rejects with LockTimeoutError when it stays busy.
   * Given a list of keys, takes all of them or none (in sorted order, so overlapping sets cannot
   * deadlock) within one `waitMs`, and resolves one `MultiLock` (see docs/multi-key-locks.md).
   */
  async acquire(key: string | readonly string[], options?: LockOptions): Promise<Lock> {
    return this.handOut(await this.acquireScoped(key, options));
  }

  /**
   * @internal
   * `acquire()` for a caller that runs the lock in a scope at once (`withLock`, `@Locked`): it is
   * not handed out, so nothing waits for `run()` to enter it. Takes options checked once by
   * `checkOptions()` as they are. Bad arguments may throw before it returns a promise.
   */
  acquireScoped(
    key: string | readonly string[],
    options?: LockOptions | CheckedLockOptions,
  ): Promise<LockHandle | MultiLockHandle> {
    // A string goes straight through: no list to build or sort on the common path.
    if (typeof key !== 'string') return this.acquireList(key, options, false);
    assertKey(key);
    if (options instanceof CheckedLockOptions)
      return this.acquireResolved(key, this.checkedHere(options).resolved, options.refusal);
    const resolved = resolveLockOptions(options, this);
    return this.acquireResolved(key, resolved, this.refusalOf(resolved));
  }

  /**
   * @internal
   * Checks `options` once, as every acquisition would (InvalidLockArgumentError), against this
   * engine's defaults, for a caller that takes many locks with the same options (`@Locked`):
   * `acquireScoped` takes the result as it is, with no check per call. A kind of lock the store
   * does not implement is refused by each acquisition, naming its key, as with unchecked options.
   */
  checkOptions(options?: LockOptions): CheckedLockOptions {
    const resolved = resolveLockOptions(options, this);
    return new CheckedLockOptions(this, resolved, this.refusalOf(resolved));
  }

  /** One attempt (per key, for a list); resolves `null` when the lock (any key of a list) is busy. */
  async tryAcquire(key: string | readonly string[], options?: LockOptions): Promise<Lock | null> {
    try {
      if (typeof key !== 'string') return this.handOut(await this.acquireList(key, options, true));
      assertKey(key);
      const resolved = { ...resolveLockOptions(options, this), waitMs: 0 };
      return this.handOut(await this.acquireResolved(key, resolved, this.refusalOf(resolved)));
    } catch (error) {
      if (error instanceof LockTimeoutError) return null;
      throw error;
    }
  }

  /**
   * Takes one of the `permits` permits of the counting semaphore `key`, waiting up to `waitMs`;
   * rejects with LockTimeoutError while `permits` holders have it. The permit is leased and renewed
   * like a lock. Shorthand for `acquire(key, { ...options, permits })`.
   */
  semaphore(key: string, permits: number, options?: LockOptions): Promise<Lock> {
    return this.acquire(key, { ...options, permits });
  }

  /** Runs `fn` holding the lock (visible to `current()` and re-entrant inside it), then releases it. */
  async withLock<T>(
    key: string | readonly string[],
    fn: (lock: Lock) => T | Promise<T>,
    options?: LockOptions,
  ): Promise<T> {
    if (typeof fn !== 'function') throw new InvalidLockArgumentError('withLock needs a function to run');
    const lock = await this.acquireScoped(key, options);
    let result: T;
    try {
      result = await this.run(lock, fn);
    } catch (error) {
      await lock[Symbol.asyncDispose]().catch(() => undefined);
      throw error;
    }
    try {
      await lock.release();
    } catch (error) {
      // A loss was already signalled (signal, event), so it is not thrown here; a store failure on release is.
      if (!(error instanceof LockLostError)) throw error;
    }
    return result;
  }

  /**
   * Runs `fn` with `lock` (from this engine's `acquire()`) as the current lock of its call chain,
   * without releasing it: nested `withLock`, `@Locked` and `acquire` calls on its key inside `fn`
   * are re-entrant. A lock from `acquire()` is not in any scope by itself (an async function cannot
   * change the async context of its caller), so a nested call on the same key outside `run()` waits
   * for it (a `self-wait` event says so after a second). The scope lasts until the lock is released:
   * work `fn` started keeps it while the lock is held.
   *
   * ```ts
   * await using lock = await locks.acquire('report');
   * await locks.run(lock, () => this.build());   // build() may use withLock('report') again
   * ```
   */
  run<T>(lock: Lock, fn: (lock: Lock) => T): T {
    if (typeof fn !== 'function') throw new InvalidLockArgumentError('run needs a function to run');
    const call = () => fn(lock);
    if (lock instanceof LockHandle && lock.lease.owner === this.leaseOwner) {
      this.enterScope(lock.lease);
      lock.enteredScope();
      return runInScope(lock.lease, lock, call);
    }
    if (lock instanceof MultiLockHandle && lock.leases.every((lease) => lease.owner === this.leaseOwner)) {
      for (const lease of lock.leases) this.enterScope(lease);
      lock.enteredScope();
      return runInScopes(lock.leases, lock, call);
    }
    throw new InvalidLockArgumentError('run() takes a lock that this lock service acquired');
  }

  /** The innermost lock held by this async call chain (inside `withLock` or a `@Locked` method). */
  current(): Lock | undefined {
    return currentLock();
  }

  /** What the store says about `key` now: holders (instance, label, fence, remaining lease), waiters. */
  inspect(key: string): Promise<LockInfo> {
    return this.inspector.inspect(key);
  }

  /** One page of held (or waited-for) keys starting with `prefix`; pass `cursor` on for the next. */
  list(options?: ListLocksOptions): Promise<LockList> {
    return this.inspector.list(options);
  }

  /**
   * Frees `key` whoever holds it (its semaphore permits too) and emits `force-released`; resolves
   * `false` when nobody held it. The next holder's fence is larger than the evicted one's; the
   * evicted holder's signal aborts at its next renewal at the latest (at once in this process).
   */
  async forceRelease(key: string, options?: ForceReleaseOptions): Promise<boolean> {
    const storeKey = this.keyPrefix + key;
    // Only leases held before the store was told: one granted after it is the next holder's.
    const before = this.leases.toArray().filter((lease) => lease.storeKey === storeKey);
    const { evicted, reason, actor } = await this.inspector.forceRelease(key, options);
    const by = actor === undefined ? this.instance : `${actor} on ${this.instance}`;
    for (const lease of before) {
      if (evicted.length > 0) lease.markLost(`it was force-released by ${by}${reason ? ` (${reason})` : ''}`);
    }
    if (evicted.length > 0) {
      this.emit({
        type: 'force-released',
        key,
        backend: this.backend.name,
        store: this.name,
        by: this.instance,
        ...(reason === undefined ? {} : { reason }),
        ...(actor === undefined ? {} : { actor }),
        evicted,
      });
    }
    return evicted.length > 0;
  }

  /** @internal A call that skips its work when the lock is busy (`onBusy: 'skip'`) did so: emits `skipped`. */
  noteSkipped(key: string, method: string): void {
    if (this.hub.wants('skipped'))
      this.emit({
        type: 'skipped',
        key,
        backend: this.backend.name,
        store: this.name,
        method,
        instance: this.instance,
      });
  }

  /**
   * @internal Calls `listener` with the events of `types` only, and builds no event of another type
   * for it (`LockService` logs the warnings this way); returns a function that stops it.
   */
  listen(types: readonly LockEventType[], listener: LockEventListener): () => void {
    return this.hub.listen(types, listener);
  }

  /** `close()` was called: no new lock can be acquired (but by call chains that hold one, while the drain lasts). */
  get isClosed(): boolean {
    return this.draining.signal.aborted;
  }

  /**
   * Closes the engine: no new lock, then the locks still held are revoked (their signals abort
   * with LockLostError) and released, then the clients the backend owns close.
   *
   * With `gracefulMs` it drains first: for up to that long, the work already under way finishes:
   * the locks held are kept (renewed, signals quiet), and calls already waiting for a busy lock
   * go on waiting (within their `waitMs`). A new acquisition is refused at once (LockShuttingDownError)
   * unless its call chain holds a lock (inside `withLock`, `run`, a `@Locked` method): work inside a
   * lock may take more locks, re-entrant or new, as it needs them. The drain ends when no lock is held and no call waits any more, or
   * when `gracefulMs` has passed; then every wait stops with that error. A second call waits for
   * the same close; its `gracefulMs`, if shorter, ends the drain sooner (`close()` with none: at once).
   *
   * ```ts
   * process.once('SIGTERM', () => void engine.close({ gracefulMs: 10_000 }));
   * ```
   */
  async close(options: CloseOptions = {}): Promise<void> {
    const gracefulMs = options.gracefulMs === undefined ? 0 : checkGracefulMs(options.gracefulMs);
    if (this.closing) this.drain?.shorten(gracefulMs);
    else this.closing = this.closeOnce(gracefulMs);
    return this.closing;
  }

  /** A key list: all keys or none (multi-lock.ts). Anything else that is not a string is refused as a bad key. */
  private acquireList(
    keys: readonly string[],
    options: LockOptions | CheckedLockOptions | undefined,
    oneAttempt: boolean,
  ): Promise<LockHandle | MultiLockHandle> {
    if (!Array.isArray(keys)) assertKey(keys);
    const resolved =
      options instanceof CheckedLockOptions ? this.checkedHere(options).resolved : resolveLockOptions(options, this);
    const refusal = this.refusalOf(resolved);
    return acquireAll(keys, oneAttempt ? { ...resolved, waitMs: 0 } : resolved, (key, partOptions) =>
      this.acquireResolved(key, partOptions, refusal),
    );
  }

  /** Re-entrant when the call chain holds the key; else a claim in the store, granted by `grant`. Bad arguments throw at once. */
  private acquireResolved(key: string, options: ResolvedLockOptions, refusal: string | undefined): Promise<LockHandle> {
    if (this.closing !== undefined) this.refuseWhileClosing(key);
    if (refusal !== undefined) throw new InvalidLockArgumentError(`Lock "${key}": ${refusal}`);
    const storeKey = this.keyPrefix + key;
    const held = findHeldLease(storeKey, options.permits !== undefined, this.leaseOwner);
    if (held) {
      if (isShared(held.mode) && !isShared(options.mode)) {
        throw new InvalidLockArgumentError(
          `Lock "${key}" is held for reading by this call chain; it cannot be upgraded to ${options.mode} (release it first)`,
        );
      }
      return Promise.resolve(new LockHandle(held, true, options.leaseMs));
    }
    options.signal?.throwIfAborted();
    return this.grant(key, storeKey, options);
  }

  /**
   * Takes the lock for `claim` within `options.waitMs` and files the lease, or gives the claim back
   * when the wait failed or the grant came while closing (tracked: close() lets the give-back reach
   * the store first). The first attempt runs here, so that an uncontended acquisition is one async
   * step over the store's call; the waiting is the GrantWaiter's.
   */
  private async grant(key: string, storeKey: string, options: ResolvedLockOptions): Promise<LockHandle> {
    /** Set once the lease is filed: a loss the store reports before then is the failed wait's to handle. */
    let filed: Lease | undefined;
    const claim = this.backend.claim({
      key: storeKey,
      owner: holderOwnerId(this.ownerPrefix, options.label),
      leaseMs: options.leaseMs,
      mode: options.mode,
      fair: options.fair,
      permits: options.permits,
      onLost: (reason) => filed?.markLost(reason),
    });
    const startedAt = monotonicNow();
    // However long the store takes to answer (its own request timeouts may be longer), the caller hears by then.
    const answerBy = startedAt + Math.max(options.waitMs + WAIT_GRACE_MS, MIN_ATTEMPT_MS);
    // Counted until the lease is filed: a drain, or close(), that saw neither a waiter nor the lease would end under it.
    this.waiting++;
    let lease: Lease;
    try {
      let attempt: Promise<AttemptResult> | undefined;
      let result: AttemptResult;
      try {
        attempt = claim.tryAcquire();
        result = await this.deadlines.within(attempt, answerBy);
      } catch (error) {
        throw this.waiter.attemptFailed(error, attempt, key, storeKey, options, startedAt, undefined, -Infinity);
      }
      lease =
        result.acquired && startedAt + result.validityMs > monotonicNow()
          ? this.newLease(key, storeKey, claim, options, result.fence, startedAt, result.validityMs)
          : await this.waiter.wait(key, storeKey, claim, options, startedAt, answerBy, result);
    } catch (error) {
      this.doneWaiting();
      if (error instanceof UnansweredAttempt) {
        // The caller has stopped waiting; once the store answers, whatever the attempt took is given back.
        const giveBack = () => claim.release();
        this.calls.track(error.attempt.then(giveBack, giveBack)).catch(() => undefined);
        this.noteFailed(key, error.callerError);
        throw error.callerError;
      }
      const givenBack = this.calls.track(claim.release()).catch(() => undefined);
      // The store said "busy": leave it as found (no queued claim of ours) before the caller hears so, if it answers in time.
      if (error instanceof LockTimeoutError) await this.deadlines.within(givenBack, answerBy).catch(() => undefined);
      this.noteFailed(key, error);
      throw error;
    }
    if (this.shutdown.signal.aborted) {
      this.doneWaiting();
      // Granted while closing, after close() took the list of held leases: give it back before the clients close.
      this.calls.track(lease.revoke(shutdownLoss(key))).catch(() => undefined);
      const error = new LockShuttingDownError(this.backend.name);
      this.noteFailed(key, error);
      throw error;
    }
    this.leases.add(lease);
    filed = lease;
    this.doneWaiting();
    if (this.hub.wants('acquired'))
      this.emit({
        type: 'acquired',
        key,
        backend: this.backend.name,
        store: this.name,
        fence: lease.fence,
        mode: lease.mode,
        waitedMs: Math.round(monotonicNow() - startedAt),
      });
    return new LockHandle(lease, false, options.leaseMs);
  }

  private doneWaiting(): void {
    this.waiting--;
    if (this.drain !== undefined) this.drain.check();
    if (this.waiting === 0) this.noneWaiting?.();
  }

  private newLease(
    key: string,
    storeKey: string,
    claim: LockClaim,
    options: ResolvedLockOptions,
    fence: number | undefined,
    attemptStartedAt: number,
    validityMs: number,
  ): Lease {
    return new Lease(
      {
        key,
        storeKey,
        mode: options.mode,
        permits: options.permits,
        fence,
        claim,
        leaseMs: options.leaseMs,
        attemptStartedAt,
        validityMs,
        minHoldMs: options.minHoldMs,
        maxHoldMs: options.maxHoldMs,
      },
      this.leaseOwner,
    );
  }

  /** close() was called: only a call chain that holds a lock may take one, and only while the drain lasts. */
  private refuseWhileClosing(key: string): void {
    if (this.shutdown.signal.aborted || !holdsAnyLock()) {
      const error = new LockShuttingDownError(this.backend.name);
      this.noteFailed(key, error);
      throw error;
    }
  }

  /** An acquisition failed: `acquire-failed` when the store was unreachable or this instance is shutting down (a busy key has its `timeout`). */
  private noteFailed(key: string, error: unknown): void {
    if (!this.hub.wants('acquire-failed')) return;
    const reason =
      error instanceof LockShuttingDownError
        ? 'shutting-down'
        : error instanceof LockBackendError
          ? 'store-unavailable'
          : undefined;
    if (reason)
      this.emit({
        type: 'acquire-failed',
        key,
        backend: this.backend.name,
        store: this.name,
        reason,
        error: error as Error,
      });
  }

  /**
   * From this instance's recent holds of the key (RecentHolds), given how long the current hold is
   * known to have lasted: the age of this instance's own oldest hold of the key, when it holds it,
   * or how long this call found the key taken at every attempt (`seenTakenMs`), whichever is longer.
   */
  private likelyFreeInMs(key: string, storeKey: string, seenTakenMs: number): number | undefined {
    if (this.recentHolds.likelyFreeInMs(key) === undefined) return undefined;
    let ageMs = Math.max(0, seenTakenMs);
    for (const lease of this.leases) if (lease.storeKey === storeKey) ageMs = Math.max(ageMs, lease.heldMs());
    return this.recentHolds.likelyFreeInMs(key, ageMs);
  }

  /** Remembers a lock handed out to a caller outside any scope, for `self-wait` notices. */
  private handOut<L extends LockHandle | MultiLockHandle>(lock: L): L {
    const scope = currentScope();
    // A single lock (the common case) without building a list of one.
    if (lock instanceof LockHandle) this.noteUnscoped(lock.lease, scope);
    else for (const lease of lock.leases) this.noteUnscoped(lease, scope);
    return lock;
  }

  private noteUnscoped(lease: Lease, scope: LockScope | undefined): void {
    if (lease.isHeld) this.unscoped.set(lease.storeKey, { lease, scope, noticed: false });
  }

  private enterScope(lease: Lease): void {
    if (this.unscoped.get(lease.storeKey)?.lease === lease) this.unscoped.delete(lease.storeKey);
  }

  /** A lock on `storeKey` that `acquire()` handed out in the scope the caller is in now: probably the caller's own. */
  private heldBySameChain(storeKey: string): Unscoped | undefined {
    if (this.unscoped.size === 0) return undefined;
    const held = this.unscoped.get(storeKey);
    return held && held.scope === currentScope() && held.lease.isHeld ? held : undefined;
  }

  /** Emits `self-wait` once the call has waited SELF_WAIT_NOTICE_MS for it; returns how long to sleep before looking again. */
  private noticeSelfWait(key: string, held: Unscoped, startedAt: number): number {
    const waitedMs = monotonicNow() - startedAt;
    if (waitedMs < SELF_WAIT_NOTICE_MS) return SELF_WAIT_NOTICE_MS - waitedMs;
    held.noticed = true;
    if (this.unscoped.get(held.lease.storeKey) === held && held.lease.isHeld) {
      this.emit({
        type: 'self-wait',
        key,
        backend: this.backend.name,
        store: this.name,
        waitedMs: Math.round(waitedMs),
      });
    }
    return Infinity;
  }

  /** Whether the store declares this capability (see {@link BackendCapabilities}). */
  supports(capability: keyof BackendCapabilities): boolean {
    return this.backend.capabilities?.[capability] === true;
  }

  /** Why the store refuses a lock with `options`, if it does (checked-lock-options.ts). */
  private refusalOf(options: ResolvedLockOptions): string | undefined {
    return refusalOf(options, this.backend.capabilities, this.backend.name);
  }

  /** Checked options, as long as they were checked by this engine (its defaults are in them). */
  private checkedHere(options: CheckedLockOptions): CheckedLockOptions {
    if (options.checkedBy !== this)
      throw new InvalidLockArgumentError('These lock options were checked by another lock service (checkOptions)');
    return options;
  }

  /**
   * New locks are refused (but for work under way, see refuseWhileClosing), the locks held and the
   * waits already begun are left to finish for up to `gracefulMs`; then holders are told (signal)
   * and the locks freed; acquisitions under way finish or give up before the clients close.
   */
  private async closeOnce(gracefulMs: number): Promise<void> {
    // Counted from the call (or the drain's end), before the abort listeners run: they take time too.
    let closingFrom = monotonicNow();
    this.draining.abort();
    if (gracefulMs > 0) {
      this.drain = new Drain(() => this.leases.size === 0 && this.waiting === 0, gracefulMs);
      await this.drain.done;
      closingFrom = monotonicNow();
    }
    this.shutdown.abort();
    // An unreachable store is given up on after CLOSE_TIMEOUT_MS in all: its leases lapse there by themselves.
    const giveUpAt = closingFrom + CLOSE_TIMEOUT_MS;
    const released = Promise.allSettled(this.leases.toArray().map((lease) => lease.revoke(shutdownLoss(lease.key))));
    await this.deadlines.within(released, giveUpAt).catch(() => undefined);
    // Acquisitions still on their way end now (the shutdown signal stops their waits); those that fail give their claims back.
    await this.deadlines.within(this.waitingEnded(), giveUpAt).catch(() => undefined);
    await this.deadlines.within(this.calls.settled(), giveUpAt).catch(() => undefined);
    this.leaseOwner.scheduler.close();
    this.hub.complete();
    try {
      await this.deadlines.within(this.backend.close(), giveUpAt);
    } catch (error) {
      if (error !== OVERDUE) throw error;
    } finally {
      this.deadlines.stopIfIdle();
      // A call still watched (an acquisition's attempt on a store that never answered) no longer keeps the process alive.
      this.deadlines.stopKeepingAlive();
    }
  }

  /** Resolves once no acquisition is on its way (at once when none is). */
  private waitingEnded(): Promise<void> {
    if (this.waiting === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.noneWaiting = () => {
        this.noneWaiting = undefined;
        resolve();
      };
    });
  }

  private emit(event: LockEvent): void {
    this.hub.emit(event);
  }
}

function checkLabel(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) {
    throw new InvalidLockArgumentError(
      `${what} must be a non-empty string of at most 200 characters, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** The reason a holder's signal aborts with when the engine closes under it. */
function shutdownLoss(key: string): LockLostError {
  return new LockLostError(key, 'the lock service is shutting down (application shutdown); it released the lock');
}
