import {
  MAX_REPORTED_WAITERS,
  type ListPage,
  type ListRequest,
  type LockInspection,
  type StoredHolder,
  type StoredLockState,
} from '../../engine/lock-inspection.js';
import { LUA_NOW } from './lua-clock.js';
import type { RedisClient } from './redis-client.js';
import { redisLockKeys } from './redis-keys.js';
import { RELEASED_MESSAGE } from './release.js';
import { luaScript, runScript } from './run-script.js';
import { redisSemaphoreKeys } from './semaphore-keys.js';
import { scanClusterPage, type ClusterMasters, type KeysPage } from './cluster-scan.js';
import { decodeNodeCursor, encodeNodeCursor, scanNode, START, type Scanner } from './scan-page.js';
import { publishingScript, runPublishingScript } from './sharded-pubsub.js';

// KEYS: lock, fence counter, readers, queue expiries, semaphore permits, queue. ARGV: most waiters listed.
// → {owner or '', lock PTTL, fence or '', live waiters, n readers, n waiters listed, waiter entry...,
//    reader owner, ms left..., permit owner, ms left...}
// Waiters: the live places among the first 2 × ARGV[1] of the queue, in arrival order (a lapsed place
// stays in the queue until a claim sweeps it).
const INSPECT = luaScript(`${LUA_NOW}
local reply = {redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]) or '', redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')}
local most = tonumber(ARGV[1])
local waiters = {}
for _, entry in ipairs(redis.call('ZRANGE', KEYS[6], 0, most * 2 - 1)) do
  if #waiters == most then break end
  local expiry = redis.call('ZSCORE', KEYS[4], entry)
  if expiry and tonumber(expiry) > now then table.insert(waiters, entry) end
end
local readers = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf', 'WITHSCORES')
table.insert(reply, #readers / 2)
table.insert(reply, #waiters)
for _, entry in ipairs(waiters) do table.insert(reply, entry) end
for i = 1, #readers, 2 do
  table.insert(reply, readers[i])
  table.insert(reply, tonumber(readers[i + 1]) - now)
end
local permits = redis.call('ZRANGEBYSCORE', KEYS[5], '(' .. now, '+inf', 'WITHSCORES')
for i = 1, #permits, 2 do
  table.insert(reply, permits[i])
  table.insert(reply, tonumber(permits[i + 1]) - now)
end
return reply
`);

// KEYS: lock, readers, semaphore permits. ARGV: lock channel, semaphore channel, message.
// Deletes every holder (the fence counters and the queue stay), announces both releases.
// → {writer or '', reader..., '|', permit...}
const FORCE_RELEASE = publishingScript(
  (publish) => `${LUA_NOW}
local reply = {redis.call('GET', KEYS[1]) or ''}
for _, reader in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')) do table.insert(reply, reader) end
table.insert(reply, '|')
local permits = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf')
for _, permit in ipairs(permits) do table.insert(reply, permit) end
if redis.call('DEL', KEYS[1], KEYS[2]) > 0 then redis.call('${publish}', ARGV[1], ARGV[3]) end
if redis.call('DEL', KEYS[3]) > 0 then redis.call('${publish}', ARGV[2], ARGV[3]) end
return reply
`,
);

/** SCAN rounds one `list()` page may take before it returns what it found, with a cursor. */
const MAX_SCAN_ROUNDS = 16;

/**
 * Inspection of the redis backend. It knows the exclusive holder's owner and remaining lease, the
 * key's latest fence (the exclusive holder's), each reader's and permit's owner and lease, and the
 * live queued waiters in arrival order (fair and read/write claims queue; plain waiters sleep on
 * pub/sub and are neither counted nor listed). It does not keep a semaphore's number of permits,
 * nor a reader's own fence. `list` SCANs the tags of keys without braces (keys hashed into their
 * tag cannot be listed, only inspected); on a Redis Cluster, every master in turn (cluster-scan.ts).
 */
export class RedisInspection implements LockInspection {
  constructor(private readonly client: RedisClient) {}

  async inspect(storeKey: string): Promise<StoredLockState> {
    const keys = redisLockKeys(storeKey);
    const reply = (await runScript(
      this.client,
      INSPECT,
      [keys.lock, keys.fence, keys.readers, keys.queueExpiry, redisSemaphoreKeys(storeKey).permits, keys.queue],
      [MAX_REPORTED_WAITERS],
    )) as (string | number)[];
    const [owner, pttl, fence, waiting, readerCount, waiterCount] = reply as [
      string,
      number,
      string,
      number,
      number,
      number,
    ];
    const holders: StoredHolder[] = [];
    if (owner !== '')
      holders.push({
        owner,
        ...(fence === '' ? {} : { fence: Number(fence) }),
        ...(pttl >= 0 ? { expiresInMs: Number(pttl) } : {}),
      });
    // A queue entry is the claim's mode letter and its owner id (wait-queue.ts).
    const waiters = reply.slice(6, 6 + waiterCount).map((entry) => ({ owner: String(entry).slice(1) }));
    const rest = reply.slice(6 + waiterCount);
    for (let i = 0; i < rest.length; i += 2) {
      const permit = i >= readerCount * 2;
      holders.push({ owner: String(rest[i]), expiresInMs: Number(rest[i + 1]), ...(permit ? { permit } : {}) });
    }
    const used = holders.filter((holder) => holder.permit).length;
    return {
      storeKey,
      ...(owner !== '' ? { mode: 'exclusive' as const } : readerCount > 0 ? { mode: 'read' as const } : {}),
      holders,
      waiting: Number(waiting),
      waiters,
      ...(used > 0 ? { semaphore: { used } } : {}),
    };
  }

  async list({ prefix, limit, cursor }: ListRequest): Promise<ListPage> {
    const count = Math.max(100, limit);
    const page = this.client.isCluster
      ? await scanClusterPage(this.client as unknown as ClusterMasters, prefix, limit, count, cursor, MAX_SCAN_ROUNDS)
      : await scanServerPage(this.client as unknown as Scanner, prefix, limit, count, cursor);
    const locks = await Promise.all(page.found.map((storeKey) => this.inspect(storeKey)));
    return page.cursor === undefined ? { locks } : { locks, cursor: page.cursor };
  }

  async forceRelease(storeKey: string): Promise<StoredHolder[]> {
    const lock = redisLockKeys(storeKey);
    const semaphore = redisSemaphoreKeys(storeKey);
    const reply = (await runPublishingScript(
      this.client,
      FORCE_RELEASE,
      [lock.lock, lock.readers, semaphore.permits],
      [lock.channel, semaphore.channel, RELEASED_MESSAGE],
    )) as string[];
    const split = reply.indexOf('|');
    const lockOwners = reply.slice(0, split).filter((owner) => owner !== '');
    return [
      ...lockOwners.map((owner) => ({ owner })),
      ...reply.slice(split + 1).map((owner) => ({ owner, permit: true })),
    ];
  }
}

/** One page from a single server: the cursor is the node cursor (scan-page.ts). */
async function scanServerPage(
  server: Scanner,
  prefix: string,
  limit: number,
  count: number,
  cursor: string | undefined,
): Promise<KeysPage> {
  const part = await scanNode(
    server,
    prefix,
    limit,
    count,
    cursor === undefined ? START : decodeNodeCursor(cursor, cursor),
    MAX_SCAN_ROUNDS,
  );
  return part.next ? { found: part.found, cursor: encodeNodeCursor(part.next) } : { found: part.found };
}
