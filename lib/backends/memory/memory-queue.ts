import type { AttemptResult, ClaimRequest, LockClaim } from '../../engine/lock-backend.js';
import { monotonicNow, unrefTimer, wakeableSleep } from '../../util/clock.js';

/** @internal A claim holding a key, until its lease lapses. */
export interface Holder {
  expiresAt: number;
  timer: NodeJS.Timeout;
}

/** @internal One key: the claims holding it and those queued for it, in arrival order. */
export interface KeyState {
  readonly holders: Map<MemoryClaim, Holder>;
  readonly queue: MemoryClaim[];
}

/** @internal What one kind of memory lock (a lock with modes, a semaphore) decides for itself. */
export interface HoldRule {
  /** Whether `claim` may take the key now, given its holders and the claims queued ahead of it. */
  mayTake(claim: MemoryClaim, state: KeyState): boolean;
  /** The remaining lease a busy answer reports (the engine's bound on the wait). */
  holderTtlMs(state: KeyState): number | undefined;
}

/**
 * @internal The keys of one kind of memory lock: holders with leases on timers (so fake timers
 * work), and waiters served in arrival order. The rule says who may hold a key at once.
 */
export class MemoryKeys {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    readonly rule: HoldRule,
    /** The backend's fence counter (strictly increasing over every lock and permit). */
    readonly nextFence: () => number,
  ) {}

  claim(request: ClaimRequest): LockClaim {
    return new MemoryClaim(this, request);
  }

  /** Keys that someone holds or waits for: nothing is kept for any other key. */
  get size(): number {
    return this.keys.size;
  }

  /** Ends every lease on `key` at once, as if it had lapsed (a testing aid). */
  expire(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    for (const holder of state.holders.values()) clearTimeout(holder.timer);
    state.holders.clear();
    this.settle(key);
  }

  close(): void {
    for (const state of this.keys.values()) {
      for (const holder of state.holders.values()) clearTimeout(holder.timer);
    }
    this.keys.clear();
  }

  /** The key's state if someone holds or waits for it, without creating one. */
  peek(key: string): KeyState | undefined {
    return this.keys.get(key);
  }

  /** The keys someone holds or waits for. */
  keyNames(): IterableIterator<string> {
    return this.keys.keys();
  }

  stateOf(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      state = { holders: new Map(), queue: [] };
      this.keys.set(key, state);
    }
    return state;
  }

  /** Drops the key once nobody holds or waits for it; wakes the queued claims that may now take it, in order. */
  settle(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    if (state.holders.size === 0 && state.queue.length === 0) {
      this.keys.delete(key);
      return;
    }
    for (const claim of state.queue) {
      if (!this.rule.mayTake(claim, state)) break;
      claim.wake();
    }
  }
}

/** @internal One acquisition in memory. */
export class MemoryClaim implements LockClaim {
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private everAcquired = false;
  /** The fence of the current hold, for inspection. */
  fence: number | undefined;

  constructor(
    private readonly keys: MemoryKeys,
    readonly request: ClaimRequest,
  ) {}

  async tryAcquire(): Promise<AttemptResult> {
    const { key, leaseMs } = this.request;
    const state = this.keys.stateOf(key);
    if (!this.keys.rule.mayTake(this, state)) {
      if (!state.queue.includes(this)) state.queue.push(this);
      return { acquired: false, holderTtlMs: this.keys.rule.holderTtlMs(state) };
    }
    this.leaveQueue(state);
    state.holders.set(this, { expiresAt: monotonicNow() + leaseMs, timer: this.expiryTimer(leaseMs) });
    this.everAcquired = true;
    // Claims queued right behind this one may come in too (readers behind a reader).
    this.keys.settle(key);
    this.fence = this.keys.nextFence();
    return { acquired: true, fence: this.fence, validityMs: leaseMs };
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return;
    }
    const sleeping = wakeableSleep(maxMs, signal);
    this.wakeUp = sleeping.wake;
    await sleeping.done;
    this.wakeUp = undefined;
    this.woken = false;
  }

  /** Ends the current wait, or the next one at once if the claim is not waiting right now. */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.woken = true;
  }

  async renew(leaseMs: number): Promise<number | false> {
    const holder = this.keys.stateOf(this.request.key).holders.get(this);
    if (!holder) {
      this.keys.settle(this.request.key);
      return false;
    }
    clearTimeout(holder.timer);
    holder.expiresAt = monotonicNow() + leaseMs;
    holder.timer = this.expiryTimer(leaseMs);
    return leaseMs;
  }

  async release(holdMs?: number): Promise<boolean> {
    const state = this.keys.stateOf(this.request.key);
    const holder = state.holders.get(this);
    if (holder && holdMs !== undefined) {
      // Kept as a holder nobody renews: its timer frees the key and wakes the waiters. Node's timers
      // count in whole ms of a coarser clock and may fire up to 1 ms early: 1 ms more keeps it "at least".
      clearTimeout(holder.timer);
      holder.expiresAt = monotonicNow() + holdMs + 1;
      holder.timer = this.expiryTimer(holdMs + 1);
      return true;
    }
    if (holder) {
      clearTimeout(holder.timer);
      state.holders.delete(this);
    }
    this.leaveQueue(state);
    this.keys.settle(this.request.key);
    return holder !== undefined || !this.everAcquired;
  }

  private leaveQueue(state: KeyState): void {
    const index = state.queue.indexOf(this);
    if (index >= 0) state.queue.splice(index, 1);
  }

  private expiryTimer(ms: number): NodeJS.Timeout {
    return unrefTimer(() => {
      this.keys.stateOf(this.request.key).holders.delete(this);
      this.keys.settle(this.request.key);
    }, ms);
  }
}
