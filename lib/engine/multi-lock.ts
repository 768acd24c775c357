import { InvalidLockArgumentError, LockTimeoutError } from '../errors.js';
import { monotonicNow } from '../util/clock.js';
import type { LockHandle } from './lock-handle.js';
import { assertKey, type ResolvedLockOptions } from './lock-options.js';
import { MultiLockHandle } from './multi-lock-handle.js';

/** One single-key acquisition (re-entrant where the call chain holds the key) with these options. */
type AcquireOne = (key: string, options: ResolvedLockOptions) => Promise<LockHandle>;

/**
 * Takes every key of `keys` or none. The distinct keys are taken one at a time in canonical
 * (sorted) order, so two callers wanting overlapping sets always contend first for the lowest key
 * they share and can never each hold a key the other waits for. All parts share one deadline
 * (`waitMs` from now); when one part fails, the parts already taken are released before the
 * call rejects. One distinct key gives a plain single-key lock.
 */
export async function acquireAll(
  keys: readonly unknown[],
  options: ResolvedLockOptions,
  acquireOne: AcquireOne,
): Promise<LockHandle | MultiLockHandle> {
  const ordered = canonicalKeys(keys);
  if (options.permits !== undefined) {
    throw new InvalidLockArgumentError('A semaphore (permits) cannot span several keys: give one key, not a list');
  }
  if (ordered.length === 1) return acquireOne(ordered[0], options);
  const deadline = monotonicNow() + options.waitMs;
  for (;;) {
    const parts = await takeInOrder(ordered, options, deadline, acquireOne);
    // A part whose lease lapsed while a later one was awaited is no use: start again within the deadline.
    const lapsed = parts.find((part) => !part.lease.isHeld);
    if (!lapsed) return new MultiLockHandle(parts);
    await releaseAll(parts);
    if (monotonicNow() >= deadline) throw new LockTimeoutError(lapsed.key, options.waitMs);
  }
}

/** The distinct keys, sorted; InvalidLockArgumentError for an empty list or a bad element. */
function canonicalKeys(keys: readonly unknown[]): string[] {
  if (keys.length === 0) throw new InvalidLockArgumentError('Lock key list must not be empty');
  for (let i = 0; i < keys.length; i++) {
    try {
      assertKey(keys[i]);
    } catch (error) {
      throw new InvalidLockArgumentError(`Lock key list, element ${i}: ${(error as Error).message}`);
    }
  }
  // Sorting the caller's keys sorts the store keys too: they all carry the same prefix.
  return [...new Set(keys as readonly string[])].sort();
}

async function takeInOrder(
  keys: readonly string[],
  options: ResolvedLockOptions,
  deadline: number,
  acquireOne: AcquireOne,
): Promise<LockHandle[]> {
  const parts: LockHandle[] = [];
  try {
    for (const key of keys) {
      parts.push(await acquireOne(key, { ...options, waitMs: Math.max(0, deadline - monotonicNow()) }));
    }
    return parts;
  } catch (error) {
    await releaseAll(parts);
    // The caller waited for the whole set: report its waitMs, not what was left for this part.
    if (error instanceof LockTimeoutError)
      throw new LockTimeoutError(error.key, options.waitMs, error.retryAfterMs, error.likelyFreeInMs);
    throw error;
  }
}

/** Last taken first; a part that fails to release lapses on its own after its lease. */
async function releaseAll(parts: readonly LockHandle[]): Promise<void> {
  for (let i = parts.length - 1; i >= 0; i--) await parts[i].release().catch(() => undefined);
}
