import { LockBackendError, LockShuttingDownError, LockTimeoutError } from '../errors.js';
import { toBackendError, atAddress } from '../util/backend-error.js';
import { MAX_TIMER_MS, monotonicNow } from '../util/clock.js';
import type { InFlight } from '../util/in-flight.js';
import { OVERDUE } from '../util/time-limit.js';
import type { AnswerDeadlines } from './answer-deadlines.js';
import type { Lease } from './lease.js';
import type { AttemptResult, LockBackend, LockClaim } from './lock-backend.js';
import type { LockEventHub } from './lock-event-hub.js';
import type { ResolvedLockOptions } from './lock-options.js';
import type { LockScope } from './lock-scope.js';

/** A lock `acquire()` handed out that no scope has entered yet: a nested call of the same chain would wait for it. */
export interface Unscoped {
  readonly lease: Lease;
  /** The call chain's scope when it was acquired. */
  readonly scope: LockScope | undefined;
  noticed: boolean;
}

/** What the wait needs of its engine. */
interface GrantWaitHost {
  readonly backend: LockBackend;
  /** The store's name in events. */
  readonly storeName: string;
  readonly hub: LockEventHub;
  readonly deadlines: AnswerDeadlines;
  readonly calls: InFlight;
  /** Aborted when the engine's drain ends: every wait stops. */
  readonly shutdown: AbortSignal;
  newLease(
    key: string,
    storeKey: string,
    claim: LockClaim,
    options: ResolvedLockOptions,
    fence: number | undefined,
    attemptStartedAt: number,
    validityMs: number,
  ): Lease;
  likelyFreeInMs(key: string, storeKey: string, seenTakenMs: number): number | undefined;
  heldBySameChain(storeKey: string): Unscoped | undefined;
  noticeSelfWait(key: string, held: Unscoped, startedAt: number): number;
}

/**
 * @internal The wait for a busy lock, after a first attempt that did not get it: sleeps until the
 * lock may be free (the store's `waitForChange`), tries again, until `waitMs`, the caller's signal or
 * the engine's shutdown. One per engine.
 */
export class GrantWaiter {
  constructor(private readonly host: GrantWaitHost) {}

  /** The wait after a first attempt that did not get the lock (`result`): sleeps until the lock may be free, tries again, until `waitMs`. */
  async wait(
    key: string,
    storeKey: string,
    claim: LockClaim,
    options: ResolvedLockOptions,
    startedAt: number,
    answerBy: number,
    result: AttemptResult,
  ): Promise<Lease> {
    const deadline = startedAt + options.waitMs;
    // Not stopped when close() begins: a wait that got past refuseWhileClosing is work under way; the drain's end stops it.
    const stop = options.signal ? AbortSignal.any([options.signal, this.host.shutdown]) : this.host.shutdown;
    let attemptStartedAt = startedAt;
    let lastBusy: AttemptResult | undefined;
    /** When the first attempt that found the key taken got its answer: the key has been taken since, as far as this call saw. */
    let firstBusyAt: number | undefined;
    let lastBusyStartedAt: number;
    let selfHeld: Unscoped | undefined | null = null;
    for (;;) {
      if (result.acquired) {
        if (attemptStartedAt + result.validityMs > monotonicNow())
          return this.host.newLease(key, storeKey, claim, options, result.fence, attemptStartedAt, result.validityMs);
        // Acquired, but the lease was already spent getting it: drop it, and try again shortly.
        await this.host.deadlines.within(this.host.calls.track(claim.release()), answerBy).catch(() => undefined);
        result = { acquired: false, holderTtlMs: 0 };
      }
      lastBusy = result;
      firstBusyAt ??= monotonicNow();
      lastBusyStartedAt = attemptStartedAt;
      const remaining = deadline - monotonicNow();
      if (remaining <= 0) {
        if (this.host.hub.wants('timeout'))
          this.host.hub.emit({
            type: 'timeout',
            key,
            backend: this.host.backend.name,
            store: this.host.storeName,
            waitedMs: Math.round(monotonicNow() - startedAt),
          });
        throw new LockTimeoutError(
          key,
          options.waitMs,
          result.holderTtlMs,
          this.host.likelyFreeInMs(key, storeKey, attemptStartedAt - firstBusyAt),
        );
      }
      if (stop.aborted) break;
      // The holder's remaining lease bounds the wait, in case its release notification never comes.
      const holderTtlMs =
        result.holderTtlMs !== undefined && result.holderTtlMs >= 0 ? result.holderTtlMs + 1 : Infinity;
      let sleepMs = Math.min(remaining, holderTtlMs, MAX_TIMER_MS);
      if (selfHeld === null) selfHeld = this.host.heldBySameChain(storeKey);
      if (selfHeld && !selfHeld.noticed)
        sleepMs = Math.min(sleepMs, this.host.noticeSelfWait(key, selfHeld, startedAt));
      await claim.waitForChange(sleepMs, stop);
      if (stop.aborted) break;
      attemptStartedAt = monotonicNow();
      let attempt: Promise<AttemptResult> | undefined;
      try {
        attempt = claim.tryAcquire();
        result = await this.host.deadlines.within(attempt, answerBy);
      } catch (error) {
        throw this.attemptFailed(
          error,
          attempt,
          key,
          storeKey,
          options,
          startedAt,
          lastBusy,
          lastBusyStartedAt - firstBusyAt,
        );
      }
    }
    if (this.host.shutdown.aborted) throw new LockShuttingDownError(this.host.backend.name);
    throw options.signal?.reason;
  }

  /** What an attempt that failed (`error`) or went unanswered (OVERDUE) throws; `seenTakenMs`: as for `unanswered`. */
  attemptFailed(
    error: unknown,
    attempt: Promise<AttemptResult> | undefined,
    key: string,
    storeKey: string,
    options: ResolvedLockOptions,
    startedAt: number,
    lastBusy: AttemptResult | undefined,
    seenTakenMs: number,
  ): unknown {
    if (error === OVERDUE)
      return new UnansweredAttempt(attempt!, this.unanswered(key, storeKey, options, startedAt, lastBusy, seenTakenMs));
    return toBackendError(this.host.backend.name, error, this.host.backend.address);
  }

  /** The caller's error when the store has not answered by the end of the wait: busy if it last said so, else unreachable. */
  private unanswered(
    key: string,
    storeKey: string,
    options: ResolvedLockOptions,
    startedAt: number,
    lastBusy: AttemptResult | undefined,
    seenTakenMs: number,
  ): Error {
    const waitedMs = Math.round(monotonicNow() - startedAt);
    if (lastBusy && !lastBusy.acquired) {
      this.host.hub.emit({
        type: 'timeout',
        key,
        backend: this.host.backend.name,
        store: this.host.storeName,
        waitedMs,
      });
      return new LockTimeoutError(
        key,
        options.waitMs,
        lastBusy.holderTtlMs,
        this.host.likelyFreeInMs(key, storeKey, seenTakenMs),
      );
    }
    return new LockBackendError(
      this.host.backend.name,
      atAddress(
        `the store did not answer lock "${key}" within ${waitedMs} ms (unreachable or overloaded); the attempt is given back if it lands later`,
        this.host.backend.address,
      ),
    );
  }
}

/** An attempt the store had not answered when the caller's wait ended. */
export class UnansweredAttempt {
  constructor(
    readonly attempt: Promise<AttemptResult>,
    readonly callerError: Error,
  ) {}
}
