import type { AttemptResult, ClaimRequest, LockClaim } from '../lock-backend.js';
import { monotonicNow, sleep, unrefTimer } from '../../engine/clock.js';

interface Permit {
  expiresAt: number;
  timer: NodeJS.Timeout;
}

/** One semaphore key: the claims holding a permit, and those waiting, in arrival order. */
interface SemaphoreState {
  readonly holders: Map<MemorySemaphoreClaim, Permit>;
  readonly queue: MemorySemaphoreClaim[];
}

/**
 * @internal The memory backend's counting semaphores, kept apart from its locks (a key may be
 * both). A claim takes a permit when the holders plus the claims queued ahead of it number fewer
 * than its `permits`, so waiters are served in arrival order. Leases lapse on timers.
 */
export class MemorySemaphores {
  private readonly keys = new Map<string, SemaphoreState>();

  constructor(
    /** The backend's fence counter (strictly increasing over every lock and permit). */
    readonly nextFence: () => number,
  ) {}

  claim(request: ClaimRequest): LockClaim {
    return new MemorySemaphoreClaim(this, request);
  }

  /** Ends every permit of `storeKey` at once, as if their leases had lapsed (a testing aid). */
  expire(storeKey: string): void {
    const state = this.keys.get(storeKey);
    if (!state) return;
    for (const permit of state.holders.values()) clearTimeout(permit.timer);
    state.holders.clear();
    this.settle(storeKey);
  }

  close(): void {
    for (const state of this.keys.values()) {
      for (const permit of state.holders.values()) clearTimeout(permit.timer);
    }
    this.keys.clear();
  }

  stateOf(key: string): SemaphoreState {
    let state = this.keys.get(key);
    if (!state) {
      state = { holders: new Map(), queue: [] };
      this.keys.set(key, state);
    }
    return state;
  }

  /** Drops the key once nobody holds or waits for it; wakes the queued claims that may now take a permit. */
  settle(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    if (state.holders.size === 0 && state.queue.length === 0) {
      this.keys.delete(key);
      return;
    }
    for (const claim of state.queue) {
      if (!claim.mayTake(state)) break;
      claim.wake();
    }
  }
}

class MemorySemaphoreClaim implements LockClaim {
  private readonly permits: number;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private everAcquired = false;

  constructor(
    private readonly semaphores: MemorySemaphores,
    private readonly request: ClaimRequest,
  ) {
    this.permits = request.permits ?? 1;
  }

  async tryAcquire(): Promise<AttemptResult> {
    const state = this.semaphores.stateOf(this.request.key);
    if (!this.mayTake(state)) {
      if (!state.queue.includes(this)) state.queue.push(this);
      return { acquired: false, holderTtlMs: earliestExpiry(state) };
    }
    const index = state.queue.indexOf(this);
    if (index >= 0) state.queue.splice(index, 1);
    state.holders.set(this, { expiresAt: monotonicNow() + this.request.leaseMs, timer: this.expiryTimer(this.request.leaseMs) });
    this.everAcquired = true;
    return { acquired: true, fence: this.semaphores.nextFence(), validityMs: this.request.leaseMs };
  }

  /** Fewer than this claim's `permits` hold the key or are queued ahead of it. */
  mayTake(state: SemaphoreState): boolean {
    const ahead = state.queue.indexOf(this);
    return state.holders.size + (ahead >= 0 ? ahead : state.queue.length) < this.permits;
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return;
    }
    const wakeSignal = new AbortController();
    this.wakeUp = () => wakeSignal.abort();
    await sleep(maxMs, AbortSignal.any([signal, wakeSignal.signal]));
    this.wakeUp = undefined;
    this.woken = false;
  }

  /** Ends the current wait, or the next one at once if the claim is not waiting right now. */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.woken = true;
  }

  async renew(leaseMs: number): Promise<number | false> {
    const permit = this.semaphores.stateOf(this.request.key).holders.get(this);
    if (!permit) {
      this.semaphores.settle(this.request.key);
      return false;
    }
    clearTimeout(permit.timer);
    permit.expiresAt = monotonicNow() + leaseMs;
    permit.timer = this.expiryTimer(leaseMs);
    return leaseMs;
  }

  async release(): Promise<boolean> {
    const state = this.semaphores.stateOf(this.request.key);
    const permit = state.holders.get(this);
    if (permit) {
      clearTimeout(permit.timer);
      state.holders.delete(this);
    }
    const index = state.queue.indexOf(this);
    if (index >= 0) state.queue.splice(index, 1);
    this.semaphores.settle(this.request.key);
    return permit !== undefined || !this.everAcquired;
  }

  private expiryTimer(ms: number): NodeJS.Timeout {
    return unrefTimer(() => {
      this.semaphores.stateOf(this.request.key).holders.delete(this);
      this.semaphores.settle(this.request.key);
    }, ms);
  }
}

/** Time until the first permit's lease lapses: when a crashed holder's permit frees at the latest. */
function earliestExpiry(state: SemaphoreState): number | undefined {
  let earliest: number | undefined;
  for (const permit of state.holders.values()) earliest = Math.min(earliest ?? Infinity, permit.expiresAt);
  return earliest === undefined ? undefined : Math.max(0, Math.ceil(earliest - monotonicNow()));
}
