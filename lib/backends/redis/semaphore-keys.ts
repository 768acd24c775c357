import { redisLockKeys } from './redis-keys.js';

/** @internal The Redis names of one key's semaphore: apart from the key's lock, in the same hash slot. */
export interface RedisSemaphoreKeys {
  /** Sorted set: owner → expiry of its permit (ms, by Redis's clock). Expires itself after the last permit. */
  readonly permits: string;
  /** Fence counter: advanced on every permit taken; expires once the semaphore has been idle (see lua-fence.ts). */
  readonly fence: string;
  /** Pub/sub channel on which a released permit is announced. */
  readonly channel: string;
}

/**
 * @internal Derives the semaphore's names from the store key: the lock's hash tag (see
 * `redisLockKeys`) followed by `:sem`, so a key's semaphore and lock never share a name (no
 * WRONGTYPE) but live on one cluster node, and one script can touch all of the semaphore's keys.
 */
export function redisSemaphoreKeys(storeKey: string): RedisSemaphoreKeys {
  const tag = redisLockKeys(storeKey).lock;
  return { permits: `${tag}:sem`, fence: `${tag}:sem:fence`, channel: `${tag}:sem:released` };
}
