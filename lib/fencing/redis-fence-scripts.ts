import { fenceScript, type FenceScript } from './run-fence-script.js';

/*
 * Every fenced script gets the fence key as its last KEY and the fence as its last ARGV. It reads
 * the highest fence accepted, refuses a lower one (reply `{1, highest}`: nothing written), else does
 * the write and then raises the stored fence (reply `{0, result}`). The write comes first: if it
 * fails (WRONGTYPE, an error in a user's script), Redis does not undo what a script already did,
 * and the fence is left as it was. Fences are compared as Lua numbers (doubles): exact for the
 * whole numbers below 2^53 a fence can be (Redis's clock-floored fences are ~1.8e15 µs).
 */

const CHECK = `local fence_key = KEYS[#KEYS]
local fence = ARGV[#ARGV]
local stored = redis.call('GET', fence_key)
if stored and tonumber(fence) < tonumber(stored) then return {1, stored} end`;

const RAISE = `if not stored or tonumber(fence) > tonumber(stored) then redis.call('SET', fence_key, fence) end`;

const fenced = (write: string) => fenceScript(`${CHECK}\n${write}\n${RAISE}\nreturn {0}`);

/** KEYS: key, fence key. ARGV: value, PX ms or '', fence. */
export const FENCED_SET = fenced(
  `if ARGV[2] == '' then redis.call('SET', KEYS[1], ARGV[1]) else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end`,
);

/** KEYS: key, fence key. ARGV: fence. */
export const FENCED_DEL = fenced(`redis.call('DEL', KEYS[1])`);

/** KEYS: key, fence key. ARGV: field, value, ..., fence. */
export const FENCED_HSET = fenced(`redis.call('HSET', KEYS[1], unpack(ARGV, 1, #ARGV - 1))`);

/**
 * The user's script `body`, fenced. It runs as the body of a function whose parameters are named
 * `KEYS` and `ARGV`, given the caller's keys and arguments without the fence's, so it sees exactly
 * what it was called with. An error reply it returns (`redis.error_reply`) is passed on as is.
 */
export function fencedEval(body: string): FenceScript {
  return fenceScript(`${CHECK}
local user_keys, user_argv = {}, {}
for i = 1, #KEYS - 1 do user_keys[i] = KEYS[i] end
for i = 1, #ARGV - 1 do user_argv[i] = ARGV[i] end
local result = (function(KEYS, ARGV)
${body}
end)(user_keys, user_argv)
if type(result) == 'table' and result.err then return result end
${RAISE}
return {0, result}`);
}
