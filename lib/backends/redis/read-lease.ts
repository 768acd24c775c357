import { LUA_NOW, luaKeepReaders } from './lua-clock.js';
import { luaIdleFence, luaKeepFence } from './lua-fence.js';
import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { RELEASED_MESSAGE } from './release.js';
import { luaScript, runScriptBatched } from './run-script.js';
import { publishingScript, runPublishingScript } from './sharded-pubsub.js';

// KEYS: readers[, fence counter]. ARGV: owner, lease ms[, idle ms]. Extends a reader's lease only
// while it has not lapsed; with a fence counter, keeps it for at least the idle time after the new lease.
const RENEW_READ = luaScript(`
${LUA_NOW}
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry or tonumber(expiry) <= now then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
${luaKeepReaders('KEYS[1]')}
if KEYS[2] then ${luaKeepFence('KEYS[2]', 'tonumber(ARGV[2]) + tonumber(ARGV[3])')} end
return 1
`);

// KEYS: readers[, fence counter, lock]. ARGV: owner, channel, message[, idle ms]. Removes this reader
// only; when it was the last one (the others lapsed or left), announces the release, so a queued
// writer wakes, and, with a fence counter and no writer holding the key (one may have come in after
// this reader's lease lapsed), lets the counter expire the idle time from now. 1 if it still held.
const RELEASE_READ = publishingScript(
  (publish) => `
${LUA_NOW}
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('${publish}', ARGV[2], ARGV[3])
  if KEYS[2] and redis.call('EXISTS', KEYS[3]) == 0 then ${luaIdleFence('KEYS[2]', 'ARGV[4]')} end
else
  ${luaKeepReaders('KEYS[1]')}
end
if tonumber(expiry) <= now then return 0 end
return 1
`,
);

/** @internal Whether the reader's lease was extended (false: it lapsed, or the reader left). `fenceIdleMs`: as for renewLock. */
export async function renewReadLock(
  client: RedisClient,
  keys: RedisLockKeys,
  owner: string,
  leaseMs: number,
  fenceIdleMs?: number,
): Promise<boolean> {
  const reply =
    fenceIdleMs === undefined
      ? runScriptBatched(client, RENEW_READ, [keys.readers], [owner, leaseMs])
      : runScriptBatched(client, RENEW_READ, [keys.readers, keys.fence], [owner, leaseMs, fenceIdleMs]);
  return Number(await reply) === 1;
}

/** @internal Whether this reader still held its share (and so freed it). `fenceIdleMs`: as for releaseLock. */
export async function releaseReadLock(
  client: RedisClient,
  keys: RedisLockKeys,
  owner: string,
  message = RELEASED_MESSAGE,
  fenceIdleMs?: number,
): Promise<boolean> {
  const reply =
    fenceIdleMs === undefined
      ? runPublishingScript(client, RELEASE_READ, [keys.readers], [owner, keys.channel, message])
      : runPublishingScript(
          client,
          RELEASE_READ,
          [keys.readers, keys.fence, keys.lock],
          [owner, keys.channel, message, fenceIdleMs],
        );
  return Number(await reply) === 1;
}
