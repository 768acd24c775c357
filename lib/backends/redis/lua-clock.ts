/**
 * @internal Lua that sets `now` to Redis's clock in ms, for scripts that judge expiries themselves
 * (reader leases, queue places), so every caller is judged by one clock whatever its own says.
 * replicate_commands: on Redis 3.2-4, writes after TIME need effects replication (the default since 5).
 */
export const LUA_NOW = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`;

/** @internal Lua that keeps the readers set (`readersKey`, e.g. `'KEYS[3]'`) alive exactly as long as its longest lease; needs `now`. */
export function luaKeepReaders(readersKey: string): string {
  return `
local longest = redis.call('ZRANGE', ${readersKey}, -1, -1, 'WITHSCORES')[2]
if longest then redis.call('PEXPIRE', ${readersKey}, math.max(1, tonumber(longest) - now)) end
`;
}
