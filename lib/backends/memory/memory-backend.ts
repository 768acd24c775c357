import type { BackendCapabilities, ClaimRequest, LockBackend, LockClaim } from '../../engine/lock-backend.js';
import { MemoryInspection } from './memory-inspection.js';
import { MemoryKeys } from './memory-queue.js';
import { LOCK_RULE, SEMAPHORE_RULE } from './memory-rules.js';

/**
 * One process, no I/O: for tests and single-instance apps. Waiters are served in arrival order
 * (FIFO), readers share the key, and a waiting writer holds back readers that arrive after it.
 * Counting semaphores are kept apart from locks. Leases lapse on timers, so it works with fake timers.
 */
export class MemoryBackend implements LockBackend {
  readonly name = 'memory';
  /** Waiters always queue in arrival order, so every lock is fair. */
  readonly capabilities: BackendCapabilities = { read: true, fair: true, semaphore: true, minHold: true, fenced: true };
  /** One counter for all keys: strictly increasing per key too, and nothing to keep per released key. */
  private lastFence = 0;
  private readonly locks = new MemoryKeys(LOCK_RULE, () => ++this.lastFence);
  private readonly semaphores = new MemoryKeys(SEMAPHORE_RULE, () => ++this.lastFence);
  readonly inspection = new MemoryInspection(this.locks, this.semaphores);

  claim(request: ClaimRequest): LockClaim {
    return (request.permits === undefined ? this.locks : this.semaphores).claim(request);
  }

  async ping(): Promise<void> {}

  /** Ends every lease on `storeKey` at once, as if it had lapsed. A testing aid: the holders learn it at their next renewal. */
  expire(storeKey: string): void {
    this.locks.expire(storeKey);
  }

  /** Ends every permit of the semaphore `storeKey` at once, as if their leases had lapsed. A testing aid, like `expire`. */
  expireSemaphore(storeKey: string): void {
    this.semaphores.expire(storeKey);
  }

  /** @internal How many keys this backend keeps state for (held or waited for, locks and semaphores): a testing aid. */
  trackedKeys(): number {
    return this.locks.size + this.semaphores.size;
  }

  async close(): Promise<void> {
    this.locks.close();
    this.semaphores.close();
  }
}
