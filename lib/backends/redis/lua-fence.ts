/**
 * @internal Lua for a key's fence counter, which expires once the key has been idle.
 *
 * A fresh counter starts at Redis's clock in µs (`TIME`), and every acquisition takes
 * `max(counter + 1, now in µs)`, so fences stay strictly increasing after the counter expired (or
 * was lost in a failover): the clock has passed every fence handed out before. The counter can run
 * ahead of the clock (a local turn reserves 128 fences at once), so its TTL is the idle time, plus
 * the lease, plus how far it is ahead: it cannot expire before the clock has passed its value by
 * the idle time. So fences hold as long as Redis's clock never steps back by more than the idle
 * time. µs since 1970 (~1.8e15) are exact in Lua's doubles and in JS numbers, and redis.call writes
 * such a number with all its digits (`%.17g`).
 *
 * Inlined rather than Lua functions: a function statement creates a closure on every run of the
 * script, which the acquire fast path would pay for. Scripts that use them must call
 * `redis.replicate_commands()` before their first write (Redis 3.2-4: writes after TIME need effects
 * replication; the default since 5): see LUA_EFFECTS.
 */

/** @internal First line of a script that reads Redis's clock after (or before) writing. */
export const LUA_EFFECTS = `if redis.replicate_commands then redis.replicate_commands() end`;

/**
 * @internal The TTL, in ms, of a fence counter at the clock for a holder with `leaseMs`: the lease, the
 * idle time, and 1 ms for the fences a local turn reserves ahead of the clock (TURN_FENCES, < 1 000 µs),
 * so a fresh counter needs no arithmetic in the script.
 */
export function counterTtlMs(idleKeyTtlMs: number, leaseMs: number): number {
  return idleKeyTtlMs + leaseMs + 1;
}

/**
 * @internal Lua statements that reserve `count` fences on the counter `key`, keep the counter for
 * `ttl` ms (counterTtlMs) plus how far it runs ahead of the clock, and set the locals `first` and
 * `last`, the first and the last reserved fence, and `ahead_ms`, how far (ms, rounded up; 0 or less
 * when not) `last` runs ahead of the clock: an exclusive holder's release uses it (luaIdleFenceAhead)
 * instead of reading the clock and the counter again, since the clock only moves on while nobody
 * else can advance the counter. A live counter's TTL is never lowered: readers and
 * permits share it, and one with a short lease must not shorten it under another with a long one.
 * The arguments are Lua expressions; `count` is below 1 000.
 */
export function luaReserveFences(key: string, count: string, ttl: string): string {
  // A fresh counter (the common case for per-entity keys) is one SET NX; a live one is read first.
  return `
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local last = now_us + ${count} - 1
local ahead_ms = ${count} > 1 and 1 or 0
if not redis.call('SET', ${key}, last, 'PX', ${ttl}, 'NX') then
  last = math.max((tonumber(redis.call('GET', ${key})) or 0) + ${count}, last)
  ahead_ms = math.ceil((last - now_us) / 1000)
  local counter_ttl = math.max(${ttl} + ahead_ms, redis.call('PTTL', ${key}))
  redis.call('SET', ${key}, last, 'PX', counter_ttl)
end
local first = last - ${count} + 1`;
}

/**
 * @internal Lua statements for a release that left the key with no holder: the counter `key` now
 * expires `idle` ms (a Lua expression) after Redis's now, plus how far it runs ahead of the clock, so
 * the idle time counts from the end of the hold, not from the end of the lease it was last given
 * (which renewals keep full). It may lower the TTL: nobody holds the key, so nothing else needs it
 * longer, and the clock will have passed its value by the idle time when it expires. A missing counter
 * stays missing. Reads TIME: the script runs LUA_EFFECTS (or LUA_NOW) before its first write.
 */
export function luaIdleFence(key: string, idle: string): string {
  return `
local idle_time = redis.call('TIME')
local ahead_us = (tonumber(redis.call('GET', ${key})) or 0) - (idle_time[1] * 1000000 + idle_time[2])
redis.call('PEXPIRE', ${key}, tonumber(${idle}) + math.max(0, math.ceil(ahead_us / 1000)))`;
}

/**
 * @internal The idle TTL, in ms, that the release of an exclusive holder gives the key's fence counter
 * when the holder knows how far its fences ran ahead of Redis's clock when it reserved them
 * (`aheadMs`: the acquire script's `ahead_ms`): nobody else advanced the counter while it held the key,
 * and the clock has only moved on since, so `idle + max(0, ahead)` from the release keeps the counter
 * at least as long as luaIdleFence would, without reading TIME and the counter (one PEXPIRE).
 */
export function idleFenceTtlMs(idleKeyTtlMs: number, aheadMs: number): number {
  return idleKeyTtlMs + Math.max(0, aheadMs);
}

/**
 * @internal A Lua statement that makes the counter `key` live at least `ttl` ms more (a held lease
 * plus the idle time), never shortening it. A missing counter stays missing. `ttl`: a Lua expression.
 */
export function luaKeepFence(key: string, ttl: string): string {
  return `
local fence_ttl = tonumber(${ttl})
if redis.call('PTTL', ${key}) < fence_ttl then redis.call('PEXPIRE', ${key}, fence_ttl) end`;
}
