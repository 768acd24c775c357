import type { RedisClient } from '../redis/redis-client.js';
import { luaScript, runScript } from '../redis/run-script.js';

// KEYS: lock. ARGV: owner, lease ms. Like the redis backend's acquire script without the fence
// counter (a per-master counter would not give an honest fence here, see redlock.md).
// Free → take it: {1}. Already this owner's (an earlier round's late command landed) → refresh: {1}.
// Busy → {0, the holder's remaining lease in ms (-1: no TTL)}.
const ACQUIRE = luaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1}
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0, redis.call('PTTL', KEYS[1])}
`);

/** @internal One master's answer to an acquisition. */
export type MasterAcquireReply =
  { readonly taken: true } | { readonly taken: false; readonly holderTtlMs: number | undefined };

/** @internal Takes the lock on one master for `owner`, unless another owner holds it there. */
export async function acquireOnMaster(
  client: RedisClient,
  lockKey: string,
  owner: string,
  leaseMs: number,
): Promise<MasterAcquireReply> {
  const [taken, pttl] = ((await runScript(client, ACQUIRE, [lockKey], [owner, leaseMs])) as unknown[]).map(Number);
  if (taken === 1) return { taken: true };
  return { taken: false, holderTtlMs: pttl !== undefined && pttl >= 0 ? pttl : undefined };
}
