import { LUA_KEEP_FENCE } from './lua-fence.js';
import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { luaScript, runScriptBatched } from './run-script.js';

// KEYS: lock. ARGV: owner, lease ms. Extends the lease only while this owner holds the lock.
const RENEW = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`);

// KEYS: lock, fence counter. ARGV: owner, lease ms, idle ms. The same, and keeps the fence counter
// for at least the idle time after the new lease, so a lock held for long never loses it.
const RENEW_FENCED = luaScript(`${LUA_KEEP_FENCE}
if redis.call('GET', KEYS[1]) == ARGV[1] then
  keep_fence(KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[3]))
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`);

/** @internal Whether the lease was extended (false: the lock is gone or someone else's). For locks without a fence counter (redlock). */
export async function renewLock(client: RedisClient, keys: Pick<RedisLockKeys, 'lock'>, owner: string, leaseMs: number): Promise<boolean> {
  return Number(await runScriptBatched(client, RENEW, [keys.lock], [owner, leaseMs])) === 1;
}

/** @internal Like renewLock, keeping the key's fence counter alive `idleKeyTtlMs` past the new lease. */
export async function renewFencedLock(client: RedisClient, keys: RedisLockKeys, owner: string, leaseMs: number, idleKeyTtlMs: number): Promise<boolean> {
  return Number(await runScriptBatched(client, RENEW_FENCED, [keys.lock, keys.fence], [owner, leaseMs, idleKeyTtlMs])) === 1;
}
