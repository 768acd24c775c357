import { monotonicNow } from '../../util/clock.js';
import { InvalidLockArgumentError } from '../../errors.js';
import { isShared } from '../../engine/lock-mode.js';
import {
  MAX_REPORTED_WAITERS,
  type ListPage,
  type ListRequest,
  type LockInspection,
  type StoredHolder,
  type StoredLockState,
} from '../../engine/lock-inspection.js';
import type { KeyState, MemoryKeys } from './memory-queue.js';

/** Inspection of the memory backend: it knows everything (holders, fences, leases, waiters in arrival order, permits). */
export class MemoryInspection implements LockInspection {
  constructor(
    private readonly locks: MemoryKeys,
    private readonly semaphores: MemoryKeys,
  ) {}

  async inspect(storeKey: string): Promise<StoredLockState> {
    return this.stateOf(storeKey);
  }

  /** Sorted keys after `cursor` (the last key of the previous page). */
  async list({ prefix, limit, cursor }: ListRequest): Promise<ListPage> {
    if (cursor !== undefined && !cursor.startsWith(prefix))
      throw new InvalidLockArgumentError(
        `not a list() cursor of this backend for this prefix: ${JSON.stringify(cursor.slice(0, 40))}`,
      );
    const keys = [...new Set([...this.locks.keyNames(), ...this.semaphores.keyNames()])]
      .filter((key) => key.startsWith(prefix) && (cursor === undefined || key > cursor))
      .sort();
    const page = keys.slice(0, limit);
    return {
      locks: page.map((key) => this.stateOf(key)),
      ...(keys.length > limit ? { cursor: page[page.length - 1] } : {}),
    };
  }

  async forceRelease(storeKey: string): Promise<StoredHolder[]> {
    const evicted = [
      ...this.holdersOf(this.locks.peek(storeKey), false),
      ...this.holdersOf(this.semaphores.peek(storeKey), true),
    ];
    this.locks.expire(storeKey);
    this.semaphores.expire(storeKey);
    return evicted;
  }

  private stateOf(storeKey: string): StoredLockState {
    const lock = this.locks.peek(storeKey);
    const semaphore = this.semaphores.peek(storeKey);
    const holders = [...this.holdersOf(lock, false), ...this.holdersOf(semaphore, true)];
    const lockClaims = lock ? [...lock.holders.keys()] : [];
    const permits = semaphore ? [...semaphore.holders.keys()] : [];
    return {
      storeKey,
      ...(lockClaims.length > 0 ? { mode: isShared(lockClaims[0].request.mode) ? 'read' : 'exclusive' } : {}),
      holders,
      waiting: (lock?.queue.length ?? 0) + (semaphore?.queue.length ?? 0),
      waiters: [...(lock?.queue ?? []), ...(semaphore?.queue ?? [])]
        .slice(0, MAX_REPORTED_WAITERS)
        .map((claim) => ({ owner: claim.request.owner })),
      ...(permits.length > 0 ? { semaphore: { used: permits.length, permits: permits[0].request.permits } } : {}),
    };
  }

  private holdersOf(state: KeyState | undefined, permit: boolean): StoredHolder[] {
    if (!state) return [];
    const now = monotonicNow();
    return [...state.holders].map(([claim, holder]) => ({
      owner: claim.request.owner,
      ...(claim.fence === undefined ? {} : { fence: claim.fence }),
      expiresInMs: holder.expiresAt - now,
      ...(permit ? { permit } : {}),
    }));
  }
}
