import { idleFenceTtlMs, LUA_EFFECTS, luaIdleFence } from './lua-fence.js';
import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { renewLock } from './renew.js';
import { publishingScript, runPublishingScript } from './sharded-pubsub.js';

/** @internal The message a release publishes when the caller does not name itself. */
export const RELEASED_MESSAGE = 'released';

// KEYS: lock[, fence counter]. ARGV: owner, channel, message (names the releasing backend)[, idle ms[,
// the counter's TTL from now]]. Deletes the lock only if this owner holds it, and announces it to the
// waiters. The channel shares the key's slot: a sharded SPUBLISH stays on its shard, a plain PUBLISH
// reaches subscribers on every node (sharded-pubsub.ts). With a fence counter, the key now has no
// holder (an exclusive holder excludes readers), so the counter expires the idle time from now: one
// PEXPIRE by the TTL given when the holder knows how far its fences ran ahead (idleFenceTtlMs), else
// after reading the clock and the counter (luaIdleFence; effects replication first, before any write).
// → 0 if not this owner's, else 1 + the subscribers that heard it (on this node).
const RELEASE = publishingScript((publish) => `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[5] then redis.call('PEXPIRE', KEYS[2], ARGV[5])
  elseif KEYS[2] then
    ${LUA_EFFECTS}
    ${luaIdleFence('KEYS[2]', 'ARGV[4]')}
  end
  redis.call('DEL', KEYS[1])
  return 1 + redis.call('${publish}', ARGV[2], ARGV[3])
end
return 0
`);

/**
 * @internal Whether this owner held the lock (and so freed it). With `fenceIdleMs` (the backend's
 * `idleKeyTtlMs`), the key's fence counter then expires that long after the release (plus
 * `fenceAheadMs`, how far the holder's fences ran ahead of Redis's clock when reserved, if known;
 * else the script reads it); redlock, which has no counter, never sends it.
 */
export async function releaseLock(client: RedisClient, keys: RedisLockKeys, owner: string, message = RELEASED_MESSAGE, fenceIdleMs?: number, fenceAheadMs?: number): Promise<boolean> {
  return (await releaseLockHeard(client, keys, owner, message, fenceIdleMs, fenceAheadMs)) >= 0;
}

/** @internal Like releaseLock: -1 when this owner did not hold the lock, else how many subscribers heard the release. */
export function releaseLockHeard(client: RedisClient, keys: RedisLockKeys, owner: string, message = RELEASED_MESSAGE, fenceIdleMs?: number, fenceAheadMs?: number): Promise<number> {
  const reply =
    fenceIdleMs === undefined
      ? runPublishingScript(client, RELEASE, [keys.lock], [owner, keys.channel, message])
      : fenceAheadMs === undefined
        ? runPublishingScript(client, RELEASE, [keys.lock, keys.fence], [owner, keys.channel, message, fenceIdleMs])
        : runPublishingScript(client, RELEASE, [keys.lock, keys.fence], [owner, keys.channel, message, fenceIdleMs, idleFenceTtlMs(fenceIdleMs, fenceAheadMs)]);
  return reply.then(heardBy);
}

/** The release script's answer: 0 if not this owner's, else 1 + the subscribers that heard it. */
function heardBy(reply: unknown): number {
  return Number(reply) - 1;
}

/**
 * @internal A release that keeps the key taken (minHoldMs): while this owner still holds it, its TTL
 * becomes `holdMs` from Redis's now (PEXPIRE, owner-checked, as a renewal does), and nothing is
 * published: the key lapses by itself, and waiters sleep for its PTTL. Whether this owner held it.
 */
export function releaseHolding(client: RedisClient, keys: RedisLockKeys, owner: string, holdMs: number, fenceIdleMs?: number): Promise<boolean> {
  return renewLock(client, keys, owner, holdMs, fenceIdleMs);
}
