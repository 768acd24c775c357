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

/** @internal Whether the lease was extended (false: the lock is gone or someone else's). */
export async function renewLock(client: RedisClient, keys: RedisLockKeys, owner: string, leaseMs: number): Promise<boolean> {
  return Number(await runScriptBatched(client, RENEW, [keys.lock], [owner, leaseMs])) === 1;
}
