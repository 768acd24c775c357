import { validityAfterDrift } from '../drift.js';
import { sleep } from '../../util/clock.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../../engine/lock-backend.js';
import { Backoff, NEXT_IN_LINE_POLL_MS } from './sql-backoff.js';
import type { LeaseRow, SqlDialect, WaitPlace } from './sql-dialect.js';
import { displayKey, keyHash, storedOwner } from './sql-keys.js';

/** What a claim needs of its backend: the dialect's statements and the table, created on first use. */
interface SqlClaimStore {
  readonly dialect: SqlDialect;
  /** Clock drift allowance as a share of the lease (the `driftFactor` option). */
  readonly driftFactor: number;
  ensureTable(): Promise<void>;
}

/** With LISTEN/NOTIFY up, a waiter still re-checks this often, in case a notification was missed. */
const NOTIFIED_FALLBACK_MS = 1_000;

/** One acquisition on a SQL lease table. */
export class SqlClaim implements LockClaim {
  private readonly row: LeaseRow;
  private readonly backoff = new Backoff();
  private readonly place: WaitPlace = { sinceUs: undefined, next: false };
  private held = false;
  private woken = false;
  /** Woken by a release notification that no attempt has used yet. */
  private wakeUnused = false;
  private wakeWaiter: (() => void) | undefined;
  private unsubscribe: ((passOn: boolean) => void) | undefined;

  constructor(
    private readonly backend: SqlClaimStore,
    private readonly request: ClaimRequest,
  ) {
    this.row = {
      keyHash: keyHash(request.key),
      displayKey: displayKey(request.key),
      owner: storedOwner(request.owner),
    };
  }

  async tryAcquire(): Promise<AttemptResult> {
    await this.backend.ensureTable();
    // Listen before looking, so that a release right after this attempt still wakes the waiter.
    this.subscribe();
    this.wakeUnused = false;
    const result = await this.backend.dialect.take(this.row, this.request.leaseMs, this.place);
    if (!result.taken) return { acquired: false, holderTtlMs: result.holderTtlMs };
    this.held = true;
    this.stopListening();
    return { acquired: true, fence: result.fence, validityMs: this.validityFor(this.request.leaseMs) };
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return;
    }
    const notified = this.backend.dialect.notifier?.isListening() ?? false;
    // The next in line alone may take the key once it is free: it looks often, so the key does not sit idle.
    const pollMs = this.place.next ? Math.min(NEXT_IN_LINE_POLL_MS, this.backoff.next()) : this.backoff.next();
    const delayMs = Math.min(maxMs, notified ? NOTIFIED_FALLBACK_MS : pollMs);
    const wake = new AbortController();
    this.wakeWaiter = () => wake.abort();
    await sleep(delayMs, AbortSignal.any([signal, wake.signal]));
    this.wakeWaiter = undefined;
    this.woken = false;
  }

  /** The row's lease starts at the database's now, which comes after the request is sent. */
  validityFor(leaseMs: number): number {
    return validityAfterDrift(leaseMs, this.backend.driftFactor);
  }

  async renew(leaseMs: number): Promise<number | false> {
    if (!this.held) return false;
    return (await this.backend.dialect.renew(this.row.keyHash, this.row.owner, leaseMs))
      ? this.validityFor(leaseMs)
      : false;
  }

  async release(holdMs?: number): Promise<boolean> {
    this.stopListening();
    if (!this.held) {
      if (this.place.next) await this.backend.dialect.leaveLine?.(this.row.keyHash, this.row.owner);
      return true;
    }
    this.held = false;
    // minHoldMs: the row stays this owner's until the database's now + holdMs, and then counts as expired.
    if (holdMs !== undefined) return this.backend.dialect.renew(this.row.keyHash, this.row.owner, holdMs);
    return this.backend.dialect.release(this.row.keyHash, this.row.owner);
  }

  private subscribe(): void {
    const notifier = this.backend.dialect.notifier;
    if (!notifier || this.unsubscribe) return;
    this.unsubscribe = notifier.subscribe(this.row.keyHash, () => {
      this.wakeUnused = true;
      if (this.wakeWaiter) this.wakeWaiter();
      else this.woken = true;
    });
  }

  /** A waiter that leaves (acquired, gave up) with an unused wake hands it to the next one. */
  private stopListening(): void {
    this.unsubscribe?.(this.wakeUnused);
    this.unsubscribe = undefined;
    this.wakeUnused = false;
  }
}
