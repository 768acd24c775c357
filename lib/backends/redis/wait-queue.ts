import type { ClaimRequest } from '../../engine/lock-backend.js';
import { LUA_NOW } from './lua-clock.js';
import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { luaScript, runScriptBatched } from './run-script.js';
import { publishingScript, runPublishingScript } from './sharded-pubsub.js';

/**
 * @internal How long a queued waiter's place lasts unless refreshed (its waiter refreshes it every
 * QUEUE_REFRESH_MS). A waiter that died blocks the queue at most this long.
 */
export const QUEUE_PLACE_TTL_MS = 2_000;

/** @internal How often a live waiter refreshes its place: a few chances before it lapses. */
export const QUEUE_REFRESH_MS = 500;

/**
 * @internal When a refused claim takes a place in the key's queue: `'always'` (fair claims and the
 * read/write modes, served in arrival order) or `'found'` (plain exclusive claims: only when readers
 * hold the key or others already queue, so a plain claim never overtakes the queue and a writer is
 * never starved by readers, while a key used only for plain locks keeps no queue at all).
 */
export type QueuePolicy = 'always' | 'found';

/** @internal */
export function queuePolicyOf(request: Pick<ClaimRequest, 'mode' | 'fair'>): QueuePolicy {
  return request.fair || request.mode !== 'exclusive' ? 'always' : 'found';
}

/** @internal A claim's name in the queue: 'r' (reader) or 'w' (writer: write or exclusive) + owner. */
export function queueEntryOf(request: Pick<ClaimRequest, 'mode' | 'owner'>): string {
  return (request.mode === 'read' ? 'r' : 'w') + request.owner;
}

// KEYS: queue, queue expiries. ARGV: entry, ttl ms. Refreshes a place that is still there.
const REFRESH = luaScript(`
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
${LUA_NOW}
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
`);

// KEYS: queue, queue expiries. ARGV: entry, channel, message. Gives the place up; when it was the
// first place or a writer's (the ones that hold others back) and others still queue, announces it.
const LEAVE = publishingScript(
  (publish) => `
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if (rank == 0 or string.sub(ARGV[1], 1, 1) == 'w') and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('${publish}', ARGV[2], ARGV[3])
end
return 1
`,
);

/** @internal Refreshes a waiter's place; false when it is gone (lapsed, or taken the lock). */
export async function refreshQueuePlace(client: RedisClient, keys: RedisLockKeys, entry: string): Promise<boolean> {
  return (
    Number(await runScriptBatched(client, REFRESH, [keys.queue, keys.queueExpiry], [entry, QUEUE_PLACE_TTL_MS])) === 1
  );
}

/** @internal Gives a waiter's place up (it stopped waiting); wakes the waiters it held back. */
export async function leaveQueue(
  client: RedisClient,
  keys: RedisLockKeys,
  entry: string,
  message: string,
): Promise<boolean> {
  return (
    Number(await runPublishingScript(client, LEAVE, [keys.queue, keys.queueExpiry], [entry, keys.channel, message])) ===
    1
  );
}
