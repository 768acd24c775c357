import type { AttemptResult, ClaimRequest, LockBackend, LockClaim, BackendCapabilities } from '../lock-backend.js';
import { monotonicNow, sleep, unrefTimer } from '../../engine/clock.js';
import { isShared } from '../../engine/lock-mode.js';
import { MemorySemaphores } from './memory-semaphore.js';

interface Holder {
  readonly claim: MemoryClaim;
  expiresAt: number;
  timer: NodeJS.Timeout;
}

/** What the store knows about one key: its holders and the claims queued for it, in arrival order. */
interface KeyState {
  readonly holders: Map<MemoryClaim, Holder>;
  readonly queue: MemoryClaim[];
}

/**
 * One process, no I/O: for tests and single-instance apps. Waiters are served in arrival order
 * (FIFO), readers share the key, and a waiting writer holds back readers that arrive after it.
 * Leases lapse on timers, so it works with fake timers.
 */
export class MemoryBackend implements LockBackend {
  readonly name = 'memory';
  /** Waiters always queue in arrival order, so every lock is fair. */
  readonly capabilities: BackendCapabilities = { read: true, fair: true, semaphore: true };
  private readonly keys = new Map<string, KeyState>();
  /** One counter for all keys: strictly increasing per key too, and nothing to keep per released key. */
  private lastFence = 0;
  private readonly semaphores = new MemorySemaphores(() => this.nextFence());

  claim(request: ClaimRequest): LockClaim {
    if (request.permits !== undefined) return this.semaphores.claim(request);
    return new MemoryClaim(this, request);
  }

  async ping(): Promise<void> {}

  /** Ends every lease on `storeKey` at once, as if it had lapsed. A testing aid: the holders learn it at their next renewal. */
  expire(storeKey: string): void {
    const state = this.keys.get(storeKey);
    if (!state) return;
    for (const holder of state.holders.values()) clearTimeout(holder.timer);
    state.holders.clear();
    this.settle(storeKey);
  }

  /** Ends every permit of the semaphore `storeKey` at once, as if their leases had lapsed. A testing aid, like `expire`. */
  expireSemaphore(storeKey: string): void {
    this.semaphores.expire(storeKey);
  }

  async close(): Promise<void> {
    this.semaphores.close();
    for (const state of this.keys.values()) {
      for (const holder of state.holders.values()) clearTimeout(holder.timer);
    }
    this.keys.clear();
  }

  /** @internal */
  stateOf(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      state = { holders: new Map(), queue: [] };
      this.keys.set(key, state);
    }
    return state;
  }

  /** @internal */
  nextFence(): number {
    return ++this.lastFence;
  }

  /** @internal Drops the key's state once nobody holds or waits for it, and wakes whoever may now go. */
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

class MemoryClaim implements LockClaim {
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private everAcquired = false;

  constructor(
    private readonly backend: MemoryBackend,
    private readonly request: ClaimRequest,
  ) {}

  async tryAcquire(): Promise<AttemptResult> {
    const state = this.backend.stateOf(this.request.key);
    if (!this.mayTake(state)) {
      if (!state.queue.includes(this)) state.queue.push(this);
      return { acquired: false, holderTtlMs: this.longestHolderTtl(state) };
    }
    const index = state.queue.indexOf(this);
    if (index >= 0) state.queue.splice(index, 1);
    const expiresAt = monotonicNow() + this.request.leaseMs;
    state.holders.set(this, { claim: this, expiresAt, timer: this.expiryTimer(this.request.leaseMs) });
    this.everAcquired = true;
    // Readers queued right behind this one may come in too.
    this.backend.settle(this.request.key);
    return { acquired: true, fence: this.backend.nextFence(), validityMs: this.request.leaseMs };
  }

  /** Free for this claim's mode, and nobody queued ahead of it that it must let go first. */
  mayTake(state: KeyState): boolean {
    const shared = isShared(this.request.mode);
    for (const holder of state.holders.values()) {
      if (!shared || !isShared(holder.claim.request.mode)) return false;
    }
    for (const queued of state.queue) {
      if (queued === this) return true;
      if (!shared || !isShared(queued.request.mode)) return false;
    }
    return true;
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
    const holder = this.backend.stateOf(this.request.key).holders.get(this);
    if (!holder) {
      this.backend.settle(this.request.key);
      return false;
    }
    clearTimeout(holder.timer);
    holder.expiresAt = monotonicNow() + leaseMs;
    holder.timer = this.expiryTimer(leaseMs);
    return leaseMs;
  }

  async release(): Promise<boolean> {
    const state = this.backend.stateOf(this.request.key);
    const holder = state.holders.get(this);
    if (holder) {
      clearTimeout(holder.timer);
      state.holders.delete(this);
    }
    const index = state.queue.indexOf(this);
    if (index >= 0) state.queue.splice(index, 1);
    this.backend.settle(this.request.key);
    return holder !== undefined || !this.everAcquired;
  }

  private expiryTimer(ms: number): NodeJS.Timeout {
    return unrefTimer(() => {
      const state = this.backend.stateOf(this.request.key);
      state.holders.delete(this);
      this.backend.settle(this.request.key);
    }, ms);
  }

  private longestHolderTtl(state: KeyState): number | undefined {
    let ttl: number | undefined;
    const now = monotonicNow();
    for (const holder of state.holders.values()) ttl = Math.max(ttl ?? 0, Math.ceil(holder.expiresAt - now));
    return ttl;
  }
}
