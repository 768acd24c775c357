import type { RedisClient } from './redis-client.js';
import type { RedisLockKeys } from './redis-keys.js';
import { luaScript, runScript } from './run-script.js';

// KEYS: lock, fence counter. ARGV: owner, lease ms.
// Free → take it with the lease and bump the fence counter, in one step: {1, fence}.
// Already this owner's (a reply lost on a reconnect, then the command resent) → refresh the lease: {1, fence}.
// Busy → {0, the holder's remaining lease in ms (-1: no TTL)}.
const ACQUIRE = luaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('INCR', KEYS[2])}
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
end
return {0, redis.call('PTTL', KEYS[1])}
`);

/** @internal */
export type AcquireReply = { readonly acquired: true; readonly fence: number } | { readonly acquired: false; readonly holderTtlMs?: number };

/** @internal One attempt to take the lock for `owner`. */
export async function acquireLock(client: RedisClient, keys: RedisLockKeys, owner: string, leaseMs: number): Promise<AcquireReply> {
  const reply = (await runScript(client, ACQUIRE, [keys.lock, keys.fence], [owner, leaseMs])) as [number, number];
  const [taken, value] = reply.map(Number);
  if (taken === 1) return { acquired: true, fence: value! };
  return { acquired: false, holderTtlMs: value! >= 0 ? value : undefined };
}
