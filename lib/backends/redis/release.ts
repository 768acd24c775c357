import { idleFenceTtlMs, LUA_EFFECTS, luaIdleFence } from './lua-fence.js';
import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { renewLock } from './renew.js';
import { afterPublishingScriptFailed, publishingScript, sendPublishingScript } from './sharded-pubsub.js';

/** @internal The message a release publishes when the caller does not name itself. */
export const RELEASED_MESSAGE = 'released';

// KEYS: lock, waiting flag[, fence counter]. ARGV: owner, channel, message (names the releasing
// backend), 1 to announce even if the key is not flagged as waited for (claims of the releasing
// process wait) or 0[, idle ms[, the counter's TTL from now]]. Deletes the lock only if this owner
// holds it, and announces it to the waiters when the key was flagged as waited for (waiting-flag.ts;
// the same DEL drops the flag and counts it) or when asked to. The channel shares the key's slot: a
// sharded SPUBLISH stays on its shard, a plain PUBLISH reaches subscribers on every node
// (sharded-pubsub.ts). With a fence counter, the key now has no holder (an exclusive holder excludes
// readers), so the counter expires the idle time from now: one PEXPIRE by the TTL given when the
// holder knows how far its fences ran ahead (idleFenceTtlMs), else after reading the clock and the
// counter (luaIdleFence; effects replication first, before any write).
// → 0 if not this owner's, else 1 + the subscribers that heard it (on this node; 0 when not announced).
const RELEASE = publishingScript(
  (publish) => `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[6] then redis.call('PEXPIRE', KEYS[3], ARGV[6])
  elseif KEYS[3] then
    ${LUA_EFFECTS}
    ${luaIdleFence('KEYS[3]', 'ARGV[5]')}
  end
  if redis.call('DEL', KEYS[1], KEYS[2]) == 1 and ARGV[4] == '0' then return 1 end
  return 1 + redis.call('${publish}', ARGV[2], ARGV[3])
end
return 0
`,
);

/**
 * @internal Whether this owner held the lock (and so freed it), announcing the release whether or not
 * anyone waited. With `fenceIdleMs` (the backend's `idleKeyTtlMs`), the key's fence counter then
 * expires that long after the release (plus `fenceAheadMs`, how far the holder's fences ran ahead of
 * Redis's clock when reserved, if known; else the script reads it); redlock, which has no counter,
 * never sends it.
 */
export function releaseLock(
  client: RedisClient,
  keys: RedisLockKeys,
  owner: string,
  message = RELEASED_MESSAGE,
  fenceIdleMs?: number,
  fenceAheadMs?: number,
): Promise<boolean> {
  return runRelease(client, keys, owner, message, fenceIdleMs, fenceAheadMs, true, wasHeld);
}

/**
 * @internal Like releaseLock: -1 when this owner did not hold the lock, else how many subscribers
 * heard the release (announced whether or not anyone waited).
 */
export function releaseLockHeard(
  client: RedisClient,
  keys: RedisLockKeys,
  owner: string,
  message = RELEASED_MESSAGE,
  fenceIdleMs?: number,
  fenceAheadMs?: number,
): Promise<number> {
  return runRelease(client, keys, owner, message, fenceIdleMs, fenceAheadMs, true, heardBy);
}

/**
 * @internal Like releaseLock, but announced only if a refused claim flagged the key as waited for
 * (waiting-flag.ts): for a holder whose own process has no claim waiting for the key.
 */
export function releaseLockIfWaited(
  client: RedisClient,
  keys: RedisLockKeys,
  owner: string,
  message: string,
  fenceIdleMs?: number,
  fenceAheadMs?: number,
): Promise<boolean> {
  return runRelease(client, keys, owner, message, fenceIdleMs, fenceAheadMs, false, wasHeld);
}

function runRelease<T>(
  client: RedisClient,
  keys: RedisLockKeys,
  owner: string,
  message: string,
  fenceIdleMs: number | undefined,
  fenceAheadMs: number | undefined,
  announce: boolean,
  answer: (reply: unknown) => T,
): Promise<T> {
  const scriptKeys = fenceIdleMs === undefined ? [keys.lock, keys.waiting] : [keys.lock, keys.waiting, keys.fence];
  const flag = announce ? 1 : 0;
  const args: (string | number)[] =
    fenceIdleMs === undefined
      ? [owner, keys.channel, message, flag]
      : fenceAheadMs === undefined
        ? [owner, keys.channel, message, flag, fenceIdleMs]
        : [owner, keys.channel, message, flag, fenceIdleMs, idleFenceTtlMs(fenceIdleMs, fenceAheadMs)];
  // One promise over the command (not an async function awaiting it): this is every release's path.
  return sendPublishingScript(client, RELEASE, scriptKeys, args).then(answer, (error: unknown) =>
    afterPublishingScriptFailed(error, client, RELEASE, scriptKeys, args).then(answer),
  );
}

/** The release script's answer: 0 if not this owner's, else 1 + the subscribers that heard it. */
function heardBy(reply: unknown): number {
  return Number(reply) - 1;
}

/** The release script's answer as whether this owner held the lock. */
function wasHeld(reply: unknown): boolean {
  return Number(reply) > 0;
}

/**
 * @internal A release that keeps the key taken (minHoldMs): while this owner still holds it, its TTL
 * becomes `holdMs` from Redis's now (PEXPIRE, owner-checked, as a renewal does), and nothing is
 * published: the key lapses by itself, and waiters sleep for its PTTL. Whether this owner held it.
 */
export function releaseHolding(
  client: RedisClient,
  keys: RedisLockKeys,
  owner: string,
  holdMs: number,
  fenceIdleMs?: number,
): Promise<boolean> {
  return renewLock(client, keys, owner, holdMs, fenceIdleMs);
}
