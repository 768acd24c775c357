import { monotonicNow } from '../../util/clock.js';
import { isShared } from '../../engine/lock-mode.js';
import type { HoldRule, KeyState, MemoryClaim } from './memory-queue.js';

/**
 * @internal Locks: readers share the key; anyone else holds it alone; nobody passes a claim
 * queued ahead of it that it could not share with (so a waiting writer holds back later readers).
 */
export const LOCK_RULE: HoldRule = {
  mayTake(claim, state) {
    const shared = isShared(claim.request.mode);
    for (const holder of state.holders.keys()) {
      if (!shared || !isShared(holder.request.mode)) return false;
    }
    for (const queued of state.queue) {
      if (queued === claim) return true;
      if (!shared || !isShared(queued.request.mode)) return false;
    }
    return true;
  },
  // The key is free for a writer only once every holder is gone.
  holderTtlMs: (state) => remainingMs(state, Math.max),
};

/**
 * @internal Semaphores: a claim takes a permit when the holders plus the claims queued ahead of
 * it number fewer than its `permits` (arrival order). Each claim counts against its own `permits`.
 */
export const SEMAPHORE_RULE: HoldRule = {
  mayTake(claim: MemoryClaim, state: KeyState) {
    const ahead = state.queue.indexOf(claim);
    return state.holders.size + (ahead >= 0 ? ahead : state.queue.length) < (claim.request.permits ?? 1);
  },
  // A permit frees when the first holder's lease lapses, at the latest.
  holderTtlMs: (state) => remainingMs(state, Math.min),
};

function remainingMs(state: KeyState, pick: (a: number, b: number) => number): number | undefined {
  let expiresAt: number | undefined;
  for (const holder of state.holders.values())
    expiresAt = expiresAt === undefined ? holder.expiresAt : pick(expiresAt, holder.expiresAt);
  return expiresAt === undefined ? undefined : Math.max(0, Math.ceil(expiresAt - monotonicNow()));
}
