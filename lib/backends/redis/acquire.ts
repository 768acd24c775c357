import type { LockMode } from '../../engine/lock-mode.js';
import { LUA_NOW, luaKeepReaders } from './lua-clock.js';
import { counterTtlMs, LUA_EFFECTS, luaKeepFence, luaReserveFences } from './lua-fence.js';
import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { afterScriptFailed, luaScript, sendScript } from './run-script.js';
import { QUEUE_PLACE_TTL_MS, type QueuePolicy } from './wait-queue.js';
import { luaFlagWaiting } from './waiting-flag.js';

// KEYS: lock, fence counter, readers, queue, queue expiries, waiting flag.
// ARGV: owner, lease ms, kind: 'x' plain exclusive (queues only when it finds a queue), 'w' queued
// writer, 'r' reader; the fence counter's TTL (counterTtlMs: the lease, the idle time and 1 ms, see
// lua-fence.ts); fences to reserve ('x' only, absent: 1; more for a local turn, see local-turn.ts).
// The claim's queue entry is 'w' or 'r' + owner (see queueEntryOf).
// Taken → {1, fence, last fence reserved, ms the last runs ahead of Redis's clock} ('x' taking a free
// key: the fence alone when it is the only one reserved and not ahead of the clock); {1, fence} when
// the owner already held the key (how far ahead is then unknown). Refused → {0, ms until a holder's lease or a queue place lapses (-1: unknown),
// 1 if the claim is queued, 1 if someone holds the key (0: only queued waiters ahead)}, and the key
// flagged as waited for (waiting-flag.ts), so that the release that ends this wait announces itself.
//
// The first block is the plain exclusive lock, unchanged (one SET NX PX and one INCR) while the key
// has no readers and no queue. Otherwise, after dropping lapsed readers and queue places: a writer
// may take the key when nobody holds it and it is first in the queue (or the queue is empty); a
// reader when no writer holds it and no writer is queued ahead of it. A refused claim takes a place
// at the end of the queue (plain: only when readers hold the key or others queue), or refreshes
// the place it has.
const ACQUIRE = luaScript(`${LUA_EFFECTS}
local owner, kind = ARGV[1], ARGV[3]
if kind == 'x' and redis.call('EXISTS', KEYS[3], KEYS[4]) == 0 then
  if redis.call('SET', KEYS[1], owner, 'NX', 'PX', ARGV[2]) then
    local count = tonumber(ARGV[5] or 1)
    ${luaReserveFences('KEYS[2]', 'count', 'ARGV[4]')}
    if count == 1 and ahead_ms <= 0 then return first end
    return {1, first, last, ahead_ms}
  end
  if redis.call('GET', KEYS[1]) == owner then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ${luaKeepFence('KEYS[2]', 'ARGV[4]')}
    return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
  end
  local wait = redis.call('PTTL', KEYS[1])
  ${luaFlagWaiting('KEYS[6]', 'wait', 'ARGV[4]')}
  return {0, wait, 0, 1}
end
${LUA_NOW}
local lease = tonumber(ARGV[2])
local writer = kind ~= 'r'
local entry = (writer and 'w' or 'r') .. owner
for _, lapsed in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)) do
  redis.call('ZREM', KEYS[4], lapsed)
end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local holder = redis.call('GET', KEYS[1])
if writer and holder == owner then
  redis.call('PEXPIRE', KEYS[1], lease)
  ${luaKeepFence('KEYS[2]', 'ARGV[4]')}
  return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
end
if not writer and redis.call('ZSCORE', KEYS[3], owner) then
  redis.call('ZADD', KEYS[3], now + lease, owner)
  ${luaKeepReaders('KEYS[3]')}
  ${luaKeepFence('KEYS[2]', 'ARGV[4]')}
  return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
end
local rank = redis.call('ZRANK', KEYS[4], entry)
local free = not holder
if writer then
  free = free and redis.call('EXISTS', KEYS[3]) == 0 and (rank == 0 or redis.call('EXISTS', KEYS[4]) == 0)
elseif free and rank ~= 0 then
  for _, ahead in ipairs(redis.call('ZRANGE', KEYS[4], 0, rank and rank - 1 or -1)) do
    if string.sub(ahead, 1, 1) == 'w' then free = false break end
  end
end
if free then
  if writer then
    redis.call('SET', KEYS[1], owner, 'PX', lease)
  else
    redis.call('ZADD', KEYS[3], now + lease, owner)
    ${luaKeepReaders('KEYS[3]')}
  end
  if rank then
    redis.call('ZREM', KEYS[4], entry)
    redis.call('ZREM', KEYS[5], entry)
  end
  ${luaReserveFences('KEYS[2]', '1', 'ARGV[4]')}
  return {1, first, first, ahead_ms}
end
local queued = rank ~= false
if not queued and (kind ~= 'x' or redis.call('EXISTS', KEYS[3], KEYS[4]) > 0) then
  local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')[2]
  redis.call('ZADD', KEYS[4], (tonumber(last) or 0) + 1, entry)
  queued = true
end
if queued then
  local ttl = ${QUEUE_PLACE_TTL_MS}
  redis.call('ZADD', KEYS[5], now + ttl, entry)
  redis.call('PEXPIRE', KEYS[4], ttl)
  redis.call('PEXPIRE', KEYS[5], ttl)
end
local wait, held = -1, 1
if holder then
  wait = redis.call('PTTL', KEYS[1])
elseif redis.call('EXISTS', KEYS[3]) == 1 then
  wait = redis.call('PTTL', KEYS[3])
else
  held = 0
  local first = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')[2]
  if first then wait = tonumber(first) - now end
end
${luaFlagWaiting('KEYS[6]', 'wait', 'ARGV[4]')}
return {0, wait, queued and 1 or 0, held}
`);

/** @internal What one attempt is for. */
export interface AcquireRequest {
  readonly owner: string;
  readonly leaseMs: number;
  readonly mode: LockMode;
  readonly policy: QueuePolicy;
  /** Fences to reserve when a plain claim takes a free key (1, or more for a local turn). */
  readonly fences?: number;
  /** How long the key's fence counter outlives the lease (the backend's `idleKeyTtlMs`). */
  readonly idleKeyTtlMs: number;
}

/** The script's one-letter kind of claim (fewer bytes on the hot path than mode and policy apart). */
function kindOf(request: AcquireRequest): 'x' | 'w' | 'r' {
  if (request.mode === 'read') return 'r';
  return request.policy === 'found' ? 'x' : 'w';
}

/** @internal */
export type AcquireReply =
  | {
      readonly acquired: true;
      readonly fence: number;
      /** The last fence reserved for the claim's local turn (`fence` when none beyond its own). */
      readonly lastFence: number;
      /** How far (ms, at most; 0 or less: not) the last fence ran ahead of Redis's clock; undefined when unknown. */
      readonly aheadMs: number | undefined;
    }
  | {
      readonly acquired: false;
      /** Time until a holder's lease (or, with nobody holding, the first queue place) lapses. */
      readonly holderTtlMs?: number;
      /** The claim has a place in the queue now. */
      readonly queued: boolean;
      /** Someone holds the key (false: it is free, but queued waiters come first). */
      readonly held: boolean;
    };

/** @internal One attempt to take the lock for `request.owner` (in its mode), joining or keeping the queue if refused. */
export function acquireLock(client: RedisClient, keys: RedisLockKeys, request: AcquireRequest): Promise<AcquireReply> {
  const scriptKeys = acquireKeys(keys);
  const args = acquireArgs(request);
  // One promise over the command (not an async function awaiting it): this is every acquisition's path.
  return sendScript(client, ACQUIRE, scriptKeys, args).then(acquireReply, (error: unknown) =>
    afterScriptFailed(error, client, ACQUIRE, scriptKeys, args).then(acquireReply),
  );
}

function acquireKeys(keys: RedisLockKeys): string[] {
  return [keys.lock, keys.fence, keys.readers, keys.queue, keys.queueExpiry, keys.waiting];
}

function acquireArgs(request: AcquireRequest): (string | number)[] {
  const kind = kindOf(request);
  const args: (string | number)[] = [
    request.owner,
    request.leaseMs,
    kind,
    counterTtlMs(request.idleKeyTtlMs, request.leaseMs),
  ];
  // One fence unless a local turn reserves more: the common case sends none.
  if (kind === 'x' && request.fences !== undefined && request.fences > 1) args.push(request.fences);
  return args;
}

function acquireReply(reply: unknown): AcquireReply {
  // The common case, a free key taken by a lone claim: one integer, nothing to unpack.
  if (typeof reply === 'number') return { acquired: true, fence: reply, lastFence: reply, aheadMs: 0 };
  const [taken, value, queued, held] = reply as [number, number, number?, number?];
  if (taken === 1)
    return {
      acquired: true,
      fence: value,
      lastFence: (reply as number[]).length > 2 ? (reply as number[])[2] : value,
      aheadMs: (reply as number[])[3],
    };
  return { acquired: false, holderTtlMs: value >= 0 ? value : undefined, queued: queued === 1, held: held === 1 };
}
