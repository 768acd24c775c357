import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { luaScript, runScript } from './run-script.js';

/** @internal What a release announces on the lock's channel. */
export const RELEASED_MESSAGE = 'released';

// KEYS: lock. ARGV: owner, channel, message. Deletes the lock only if this owner holds it, and
// announces it to the waiters. PUBLISH takes a channel, not a key: fine in a cluster, and
// plain PUBLISH reaches subscribers on every node.
const RELEASE = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0
`);

/** @internal Whether this owner held the lock (and so freed it). */
export async function releaseLock(client: RedisClient, keys: RedisLockKeys, owner: string): Promise<boolean> {
  return Number(await runScript(client, RELEASE, [keys.lock], [owner, keys.channel, RELEASED_MESSAGE])) === 1;
}
