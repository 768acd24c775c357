/**
 * @internal How long a key's waiting flag outlives the holder's lease as the refused claim saw it:
 * room for the claim's next attempt (due when that lease ends, or sooner) to reach Redis and set
 * the flag again, with its round trips and a late timer.
 */
export const WAITING_FLAG_MARGIN_MS = 1_000;

/**
 * @internal Lua that flags the key as waited for (`flag`: its `waiting` key), for as long as a refused
 * claim may sleep before it asks again: `wait` ms (a Lua expression: the holder's remaining lease as
 * the claim is told it; -1 unknown, then `fallbackTtl`) plus WAITING_FLAG_MARGIN_MS.
 *
 * An exclusive holder's release announces itself (PUBLISH) only while the flag is there (it deletes
 * the flag with the lock key, in one DEL that says whether it was), or when claims of its own process
 * wait: a key nobody waited for is freed without a message. Every claim that sleeps until a release
 * was refused, and so flagged the key, or waits behind a claim of its own process that was, for the
 * same holder: a waiter that the flag no longer covers is one whose next attempt is due anyway.
 */
export function luaFlagWaiting(flag: string, wait: string, fallbackTtl: string): string {
  return `redis.call('SET', ${flag}, 1, 'PX', (${wait} >= 0 and ${wait} or tonumber(${fallbackTtl})) + ${WAITING_FLAG_MARGIN_MS})`;
}
