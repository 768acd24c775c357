import { LockBackendError, LockLostError } from '../errors.js';
import type { LockClaim } from './lock-backend.js';
import { monotonicNow, unrefTimer } from '../util/clock.js';
import type { LockEvent, LockEventType } from './lock-events.js';
import type { LockMode } from './lock-mode.js';
import { atAddress, toBackendError } from '../util/backend-error.js';
import { HoldBounds } from './hold-bounds.js';
import { RELEASE_TIMEOUT_MS, type AnswerDeadlines } from './answer-deadlines.js';
import { OVERDUE } from '../util/time-limit.js';
import type { InFlight } from '../util/in-flight.js';
import type { Slotted } from '../util/slot-set.js';
import { MAX_SLACK_MS, type ScheduledWake, type WakeScheduler, type Wakeable } from './wake-scheduler.js';

export interface LeaseOwner {
  readonly backendName: string;
  /** The store's address for error messages (`LockBackend.address`). */
  readonly backendAddress?: string;
  /** The name of the engine's store (module), for events. */
  readonly storeName: string;
  emit(event: LockEvent): void;
  /** Someone gets events of `type`: they are worth building. */
  wants(type: LockEventType): boolean;
  /** The lease ended (released or lost): stop tracking it. */
  forget(lease: Lease): void;
  /** The holder released it after `heldMs` (for `RecentHolds`). */
  noteHeld(key: string, heldMs: number): void;
  /** The engine's one timer for the renewals and lapse deadlines of all its leases. */
  readonly scheduler: WakeScheduler;
  /** Bounds a release by RELEASE_TIMEOUT_MS. */
  readonly deadlines: AnswerDeadlines;
  /** Releases nobody awaits (a lost lock's, an unanswered one): closing lets them settle first. */
  readonly calls: InFlight;
}

interface LeaseGrant {
  readonly key: string;
  readonly storeKey: string;
  readonly mode: LockMode;
  /** Permits of a semaphore; undefined for a lock. */
  readonly permits: number | undefined;
  readonly fence: number | undefined;
  readonly claim: LockClaim;
  readonly leaseMs: number;
  /** Monotonic time at which the successful attempt started. */
  readonly attemptStartedAt: number;
  readonly validityMs: number;
  /** Hold at least: on release, the store keeps the key until this long after the acquisition. */
  readonly minHoldMs?: number;
  /** Hold at most: renewal stops this long after the acquisition. */
  readonly maxHoldMs?: number;
}

/**
 * One acquisition held in the store: keeps it alive (renewal every leaseMs/3, checked against a
 * local monotonic clock), tells the holder when it is lost, and releases it once.
 */
export class Lease implements Wakeable, Slotted {
  /** @internal Its place among its engine's held leases (SlotSet). */
  slot = -1;
  readonly key: string;
  readonly storeKey: string;
  readonly mode: LockMode;
  readonly permits: number | undefined;
  readonly fence: number | undefined;
  /** Created on first use of `signal`: most holders never look at it, and aborting one costs. */
  private controller: AbortController | undefined;
  /** Why the lease ended (LockLostError when lost), for a signal asked for afterwards. */
  private endReason: unknown;
  private readonly claim: LockClaim;
  private readonly acquiredAt = monotonicNow();
  private leaseMs: number;
  private state: 'held' | 'released' | 'lost' = 'held';
  private localDeadline = 0;
  /** The wall-clock time of `localDeadline`, worked out when first asked for (NaN until then). */
  private wallDeadline = NaN;
  /** Monotonic time of the next regular renewal. */
  private renewAt = Infinity;
  private renewing = false;
  /** The renewal in flight (while `renewing`), never rejecting: an explicit extend waits for it. */
  private renewal: Promise<void> | undefined;
  private releasing: Promise<void> | undefined;
  private readonly bounds: HoldBounds;
  /** @internal Kept by the engine's WakeScheduler. */
  scheduledWake?: ScheduledWake;
  /** After maxHoldMs: the timer that frees the key in the store once the last lease lapses. */
  private lapseTimer: NodeJS.Timeout | undefined;

  constructor(
    grant: LeaseGrant,
    /** The engine that holds it. */
    readonly owner: LeaseOwner,
  ) {
    this.key = grant.key;
    this.storeKey = grant.storeKey;
    this.mode = grant.mode;
    this.permits = grant.permits;
    this.fence = grant.fence;
    this.claim = grant.claim;
    this.leaseMs = grant.leaseMs;
    this.bounds =
      grant.minHoldMs === undefined && grant.maxHoldMs === undefined
        ? HoldBounds.NONE
        : new HoldBounds(this.acquiredAt, grant.minHoldMs, grant.maxHoldMs);
    this.setValidity(grant.attemptStartedAt, grant.validityMs);
    this.scheduleRenewal(this.nextRenewalMs());
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.state !== 'held' || this.endReason !== undefined) this.controller.abort(this.reason());
    }
    return this.controller.signal;
  }

  get expiresAt(): number {
    if (Number.isNaN(this.wallDeadline)) this.wallDeadline = Date.now() + (this.localDeadline - monotonicNow());
    return this.wallDeadline;
  }

  /** Held, and still valid by the local clock (which catches a blocked event loop before any timer can). */
  get isHeld(): boolean {
    if (this.state !== 'held') return false;
    if (monotonicNow() < this.localDeadline) return true;
    this.markLost('the lease lapsed before it was renewed (event loop blocked or process paused?)');
    return false;
  }

  get isLost(): boolean {
    return this.state === 'lost';
  }

  /** The holder released it (not lost: a lost lease's holder has yet to learn it). */
  get isReleased(): boolean {
    return this.state === 'released';
  }

  /** Frees the lock in the store. Idempotent; rejects with LockLostError when it was lost first. */
  release(): Promise<void> {
    this.releasing ??= this.lapseTimer ? this.releaseAfterMaxHold() : this.releaseHeld();
    return this.releasing;
  }

  /**
   * Shutdown: tells the holder first (its signal aborts with `reason`, so it stops before another
   * instance can take the lock), then frees the lock in the store like `release()`.
   */
  revoke(reason: LockLostError): Promise<void> {
    if (this.state === 'held' && this.endReason === undefined) {
      this.endReason = reason;
      this.controller?.abort(reason);
    }
    return this.release();
  }

  async extend(leaseMs: number): Promise<void> {
    this.assertHeld();
    // One renewal at a time: two in flight could land in one order and be answered in the other.
    while (this.renewing) await this.renewal;
    this.assertHeld();
    this.leaseMs = leaseMs;
    await this.renewNow(true);
    this.assertHeld();
    this.scheduleRenewal(this.nextRenewalMs());
  }

  /** Aborts the holder's signal with LockLostError and drops the lock in the store if it is still ours. */
  markLost(reason: string, cause?: unknown): void {
    if (this.state !== 'held') return;
    if (this.endAsLost(new LockLostError(this.key, reason, cause === undefined ? undefined : { cause })))
      this.owner.calls.track(this.claim.release()).catch(() => undefined);
  }

  /** Ends a held lease as lost: timers stop, the engine forgets it, a `lost` event, the signal aborts. False if it was not held. */
  private endAsLost(error: LockLostError): boolean {
    if (this.state !== 'held') return false;
    this.state = 'lost';
    this.stopTimers();
    this.owner.forget(this);
    this.endReason = error;
    this.owner.emit({
      type: 'lost',
      key: this.key,
      backend: this.owner.backendName,
      store: this.owner.storeName,
      fence: this.fence,
      heldMs: this.heldMs(),
      error,
    });
    this.controller?.abort(error);
    return true;
  }

  /** Frees the lock in the store, within RELEASE_TIMEOUT_MS. Not an async function: one promise over the store's call on every lock's release. */
  private releaseHeld(): Promise<void> {
    const bound = monotonicNow() + RELEASE_TIMEOUT_MS;
    let call: Promise<boolean>;
    try {
      this.assertHeld();
      this.stopTimers();
      call = this.claim.release(this.bounds.remainingHoldMs());
    } catch (error) {
      return Promise.reject(error);
    }
    return this.owner.deadlines.within(call, bound).then(
      (stillOurs) => this.released(stillOurs),
      (error: unknown) => this.releaseFailed(error, call),
    );
  }

  private released(stillOurs: boolean): void {
    if (!stillOurs) {
      this.markLost('another owner held the lock when it was released (the lease had lapsed)');
      this.assertHeld();
    }
    this.finish();
  }

  /** The store failed the release, or did not answer it in time (OVERDUE): the holder is done either way. */
  private releaseFailed(error: unknown, call: Promise<boolean>): never {
    // Unanswered: the holder stops waiting, the store may still answer (closing lets it settle first).
    if (error === OVERDUE) this.owner.calls.track(call).catch(() => undefined);
    // The store is unreachable: the lock lapses on its own after the lease.
    this.finish();
    const backendError =
      error === OVERDUE
        ? new LockBackendError(
            this.owner.backendName,
            atAddress(
              `the store did not answer the release of lock "${this.key}" within ${RELEASE_TIMEOUT_MS} ms; it frees the lock by itself when the lease lapses`,
              this.owner.backendAddress,
            ),
          )
        : toBackendError(this.owner.backendName, error, this.owner.backendAddress);
    this.owner.emit({
      type: 'release-failed',
      key: this.key,
      backend: this.owner.backendName,
      store: this.owner.storeName,
      fence: this.fence,
      error: backendError,
    });
    throw backendError;
  }

  /** maxHoldMs is reached: the holder is told, renewal stops, and the key frees when its last lease lapses. */
  private stopHolding(): void {
    if (!this.endAsLost(new LockLostError(this.key, this.bounds.stopReason()))) return;
    // Stores whose liveness is a session would keep the key for as long as the session: free it when the lease would lapse.
    this.lapseTimer = unrefTimer(() => {
      this.lapseTimer = undefined;
      this.owner.calls.track(this.claim.release()).catch(() => undefined);
    }, this.localDeadline - monotonicNow());
  }

  /** The holder releases after maxHoldMs: the key goes now rather than when its lease lapses; the loss was signalled already (and is thrown). */
  private async releaseAfterMaxHold(): Promise<void> {
    clearTimeout(this.lapseTimer);
    this.lapseTimer = undefined;
    await this.claim.release().catch(() => undefined);
    this.assertHeld();
  }

  private finish(): void {
    if (this.state !== 'held') return;
    this.state = 'released';
    this.owner.forget(this);
    const heldMs = this.heldMs();
    this.owner.noteHeld(this.key, heldMs);
    if (this.owner.wants('released'))
      this.owner.emit({
        type: 'released',
        key: this.key,
        backend: this.owner.backendName,
        store: this.owner.storeName,
        fence: this.fence,
        heldMs,
      });
    this.controller?.abort(this.reason());
  }

  private reason(): unknown {
    this.endReason ??= new DOMException(`Lock "${this.key}" was released`, 'AbortError');
    return this.endReason;
  }

  private assertHeld(): void {
    if (this.isHeld) return;
    if (this.state === 'lost') throw this.endReason as LockLostError;
    throw new LockLostError(this.key, 'it was already released');
  }

  private renewNow(explicit: boolean): Promise<void> {
    const renewal = this.renewOnce(explicit);
    // Only an explicit one rejects (for its caller); whoever waits for it just goes next.
    this.renewal = explicit ? renewal.catch(() => undefined) : renewal;
    return renewal;
  }

  private async renewOnce(explicit: boolean): Promise<void> {
    const startedAt = monotonicNow();
    const leaseMs = this.leaseMs;
    // The store may apply a renewal whose answer never comes: one that shortens the lease counts from now.
    const shortened = this.claim.validityFor?.(leaseMs);
    if (shortened !== undefined && startedAt + shortened < this.localDeadline) this.setValidity(startedAt, shortened);
    let validityMs: number | false;
    try {
      this.renewing = true;
      // While it is in flight, only the lapse deadline can wake this lease.
      this.reschedule();
      validityMs = await this.claim.renew(leaseMs);
    } catch (error) {
      const backendError = toBackendError(this.owner.backendName, error, this.owner.backendAddress);
      this.owner.emit({
        type: 'extend-failed',
        key: this.key,
        backend: this.owner.backendName,
        store: this.owner.storeName,
        fence: this.fence,
        error: backendError,
      });
      if (explicit) throw backendError;
      return;
    } finally {
      this.renewing = false;
      if (this.state === 'held') this.reschedule();
    }
    if (this.state !== 'held') return;
    if (validityMs === false) {
      this.markLost('the store no longer holds it for this owner (it expired or was taken)');
      return;
    }
    this.setValidity(startedAt, validityMs);
    if (this.owner.wants('extended'))
      this.owner.emit({
        type: 'extended',
        key: this.key,
        backend: this.owner.backendName,
        store: this.owner.storeName,
        fence: this.fence,
        expiresAt: this.expiresAt,
      });
  }

  /** @internal Called by the scheduler: a renewal or the lapse deadline is due. */
  wake(): void {
    if (!this.isHeld) return;
    if (monotonicNow() >= this.bounds.stopAt) {
      this.stopHolding();
      return;
    }
    if (!this.renewing && monotonicNow() >= this.renewAt - this.renewSlackMs()) {
      void this.renewTick().catch(() => undefined);
      return;
    }
    this.reschedule();
  }

  private async renewTick(): Promise<void> {
    if (this.renewing || !this.isHeld) return;
    await this.renewNow(false);
    if (this.state !== 'held') return;
    this.scheduleRenewal(this.nextRenewalMs());
  }

  /**
   * Every leaseMs/3, but always well before the validity the store gave runs out: after a failed
   * renewal, and for stores whose validity is shorter than leaseMs (a session or lease TTL).
   */
  private nextRenewalMs(): number {
    return Math.max(1, Math.min(this.leaseMs / 3, (this.localDeadline - monotonicNow()) / 2));
  }

  private setValidity(startedAt: number, validityMs: number): void {
    this.localDeadline = startedAt + validityMs;
    this.wallDeadline = NaN;
  }

  private scheduleRenewal(delayMs: number): void {
    this.renewAt = monotonicNow() + delayMs;
    this.reschedule();
  }

  /**
   * Wakes at the next renewal (it may run a little early to share a batch with other leases), or,
   * while a renewal is in flight, at the lapse deadline, so the signal aborts even if it is stuck.
   */
  private reschedule(): void {
    const { stopAt } = this.bounds;
    if (stopAt <= Math.min(this.localDeadline, this.renewing ? Infinity : this.renewAt))
      this.owner.scheduler.schedule(this, stopAt);
    else if (this.renewing || this.localDeadline <= this.renewAt)
      this.owner.scheduler.schedule(this, this.localDeadline);
    else this.owner.scheduler.schedule(this, this.renewAt, this.renewSlackMs());
  }

  /** A tenth of the renewal interval, so a batched renewal stays well inside the lease. */
  private renewSlackMs(): number {
    return Math.min(this.leaseMs / 30, MAX_SLACK_MS);
  }

  private stopTimers(): void {
    this.renewAt = Infinity;
    this.owner.scheduler.cancel(this);
  }

  /** How long it has been held, in whole ms. */
  heldMs(): number {
    return Math.round(monotonicNow() - this.acquiredAt);
  }
}
