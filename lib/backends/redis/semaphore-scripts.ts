import type { RedisClient } from './redis-client.js';
import type { RedisSemaphoreKeys } from './semaphore-keys.js';
import { LUA_NOW } from './lua-clock.js';
import { counterTtlMs, luaIdleFence, luaKeepFence, luaReserveFences } from './lua-fence.js';
import { luaScript, runScript, runScriptBatched } from './run-script.js';
import { publishingScript, runPublishingScript } from './sharded-pubsub.js';

// Every script judges expiries by Redis's clock (LUA_NOW), whatever the callers' clocks say.

// Keeps the set alive at least as long as its latest permit, so an abandoned semaphore vanishes on its own.
const KEEP_SET = `
if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease) end
`;

// KEYS: permits, fence counter. ARGV: owner, permits, lease ms, the fence counter's TTL (counterTtlMs,
// see lua-fence.ts).
// Drops lapsed permits; then, with fewer than `permits` left (or this owner's already there: a reply lost
// and the command resent), records the owner's expiry: {1, fence}. Full → {0, ms until the first permit lapses}.
const ACQUIRE = luaScript(`${LUA_NOW}
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local mine = redis.call('ZSCORE', KEYS[1], ARGV[1])
if mine or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  ${KEEP_SET}
  if mine then
    ${luaKeepFence('KEYS[2]', 'ARGV[4]')}
    return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
  end
  ${luaReserveFences('KEYS[2]', '1', 'ARGV[4]')}
  return {1, first}
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tonumber(first[2]) - now}
`);

// KEYS: permits[, fence counter]. ARGV: owner, lease ms[, idle ms]. Extends the owner's permit only
// while it has not lapsed; with a fence counter, keeps it for at least the idle time after the new lease.
const RENEW = luaScript(`${LUA_NOW}
local lease = tonumber(ARGV[2])
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0') <= now then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[1])
${KEEP_SET}
if KEYS[2] then ${luaKeepFence('KEYS[2]', 'lease + tonumber(ARGV[3])')} end
return 1
`);

// KEYS: permits, fence counter. ARGV: owner, channel, message, idle ms. Removes the owner's permit and
// announces it to the waiters; when no valid permit is left, the counter expires the idle time from
// now (luaIdleFence). 1 if it was still valid, 0 if it had lapsed or was gone.
const RELEASE = publishingScript(
  (publish) => `${LUA_NOW}
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('${publish}', ARGV[2], ARGV[3])
if redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') == 0 then ${luaIdleFence('KEYS[2]', 'ARGV[4]')} end
if tonumber(expiry) > now then return 1 end
return 0
`,
);

/** @internal */
type SemaphoreReply =
  { readonly acquired: true; readonly fence: number } | { readonly acquired: false; readonly holderTtlMs: number };

/** @internal One attempt to take a permit for `owner`. */
export async function acquirePermit(
  client: RedisClient,
  keys: RedisSemaphoreKeys,
  owner: string,
  permits: number,
  leaseMs: number,
  idleKeyTtlMs: number,
): Promise<SemaphoreReply> {
  const reply = (await runScript(
    client,
    ACQUIRE,
    [keys.permits, keys.fence],
    [owner, permits, leaseMs, counterTtlMs(idleKeyTtlMs, leaseMs)],
  )) as [number, number];
  const [taken, value] = reply.map(Number);
  return taken === 1 ? { acquired: true, fence: value } : { acquired: false, holderTtlMs: value };
}

/** @internal Whether the owner's permit was extended (false: it lapsed or was taken away). With `fenceIdleMs`, also keeps the fence counter (see FenceUpkeep). */
export async function renewPermit(
  client: RedisClient,
  keys: RedisSemaphoreKeys,
  owner: string,
  leaseMs: number,
  fenceIdleMs?: number,
): Promise<boolean> {
  const reply =
    fenceIdleMs === undefined
      ? runScriptBatched(client, RENEW, [keys.permits], [owner, leaseMs])
      : runScriptBatched(client, RENEW, [keys.permits, keys.fence], [owner, leaseMs, fenceIdleMs]);
  return Number(await reply) === 1;
}

/** @internal Whether the owner still held a valid permit (which is now free). The fence counter expires `idleKeyTtlMs` after the last permit's release. */
export async function releasePermit(
  client: RedisClient,
  keys: RedisSemaphoreKeys,
  owner: string,
  idleKeyTtlMs: number,
): Promise<boolean> {
  return (
    Number(
      await runPublishingScript(
        client,
        RELEASE,
        [keys.permits, keys.fence],
        [owner, keys.channel, 'released', idleKeyTtlMs],
      ),
    ) === 1
  );
}
