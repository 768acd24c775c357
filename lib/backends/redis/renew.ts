import { luaKeepFence } from './lua-fence.js';
import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { luaScript, runScriptBatched } from './run-script.js';

// KEYS: lock[, fence counter]. ARGV: owner, lease ms[, idle ms]. Extends the lease only while this
// owner holds the lock; with a fence counter, keeps it for at least the idle time after the new lease.
const RENEW = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if KEYS[2] then ${luaKeepFence('KEYS[2]', 'tonumber(ARGV[2]) + tonumber(ARGV[3])')} end
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`);

/**
 * @internal Whether the lease was extended (false: the lock is gone or someone else's). With
 * `fenceIdleMs`, the key's fence counter is kept that long after the new lease too (see FenceUpkeep);
 * redlock, which has no counter, never sends it.
 */
export async function renewLock(
  client: RedisClient,
  keys: RedisLockKeys,
  owner: string,
  leaseMs: number,
  fenceIdleMs?: number,
): Promise<boolean> {
  const reply =
    fenceIdleMs === undefined
      ? runScriptBatched(client, RENEW, [keys.lock], [owner, leaseMs])
      : runScriptBatched(client, RENEW, [keys.lock, keys.fence], [owner, leaseMs, fenceIdleMs]);
  return Number(await reply) === 1;
}
