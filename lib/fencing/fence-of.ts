import { InvalidLockArgumentError, LockLostError } from '../errors.js';
import { isMultiLock, type Lock } from '../engine/lock.js';
import { describe } from '../engine/lock-options.js';

/**
 * The fence a guarded write carries, from a number or from the `Lock` itself.
 *
 * A lock whose `signal` has aborted is refused with `LockLostError`: it is no longer held, so a
 * newer holder may exist whose fence the resource has not seen yet. A lock (or a number) without a
 * fence is refused with `InvalidLockArgumentError`: its store cannot hand out honest fences
 * (Redlock, or a custom backend without them), and a guard without a fence guards nothing.
 */
export function fenceOf(fence: number | Lock): number {
  if (typeof fence === 'object' && fence !== null) return fenceOfLock(fence);
  if (fence === undefined) throw noFence('The fence is undefined');
  if (typeof fence !== 'number' || !Number.isSafeInteger(fence) || fence < 0) {
    throw new InvalidLockArgumentError(
      `A fence must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER} (a lock's \`fence\`), got ${describe(fence)}`,
    );
  }
  return fence;
}

function fenceOfLock(lock: Lock): number {
  if (lock.signal.aborted) {
    throw new LockLostError(
      lock.key,
      'its signal has aborted, so it is no longer held and a newer holder may already have written: the fenced write is refused',
      {
        cause: lock.signal.reason,
      },
    );
  }
  if (isMultiLock(lock)) {
    throw new InvalidLockArgumentError(
      `A lock on several keys has no single fence: pass one part's fence, \`lock.fences[key]\` (lock "${lock.key}")`,
    );
  }
  if (lock.fence === undefined) throw noFence(`Lock "${lock.key}" has no fence`);
  return fenceOf(lock.fence);
}

function noFence(what: string): InvalidLockArgumentError {
  return new InvalidLockArgumentError(
    `${what}: its store cannot hand out honest fencing tokens (Redlock, or a backend without fences), so a fenced write cannot be checked. ` +
      'Take the lock from a store that gives fences (Redis, PostgreSQL, MySQL, etcd, ZooKeeper, memory) for writes that must be fenced',
  );
}
