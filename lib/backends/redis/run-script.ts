import { createHash } from 'node:crypto';
import { evalshaBatched } from './command-batcher.js';
import { sendCoalesced } from './write-coalescing.js';
import type { RedisClient } from './redis-client.js';

/** @internal A Lua script with its SHA1, as EVALSHA wants it. */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

/** @internal */
export function luaScript(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * @internal Runs `script` by its SHA, and sends the source only when the server does not know it
 * (NOSCRIPT: after a restart, a SCRIPT FLUSH, or on a cluster node that never saw it). The script
 * is then cached there, so the next call is an EVALSHA again.
 *
 * The command goes out in this tick, in a write shared with at most a few others (write-coalescing.ts),
 * so that on the acquire/release path Redis works while this process goes on.
 */
export function runScript(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  return withSourceFallback(
    client,
    script,
    keys,
    args,
    sendCoalesced(client, () => client.evalsha(script.sha, keys.length, ...keys, ...args)),
  );
}

/**
 * @internal `runScript` without the fallback, for a caller that awaits the answer itself (the
 * acquire and release paths, one promise less each): when it rejects, the caller hands the error to
 * {@link afterScriptFailed}, which sends the script in full if the server did not know it.
 */
export function sendScript(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  return sendCoalesced(client, () => client.evalsha(script.sha, keys.length, ...keys, ...args));
}

/** @internal After `sendScript` rejected with `error`: the answer of the script sent in full when the server did not know it (NOSCRIPT); else rejects with `error`. */
export function afterScriptFailed(
  error: unknown,
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  return isNoScript(error) ? client.eval(script.source, keys.length, ...keys, ...args) : Promise.reject(error);
}

/**
 * @internal `runScript` for bulk upkeep (renewals, queue heartbeats): the scripts of one tick go
 * out as one pipeline (command-batcher.ts), so a renewal tick of 10,000 leases is a few writes.
 */
export function runScriptBatched(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  return withSourceFallback(
    client,
    script,
    keys,
    args,
    evalshaBatched(client, [script.sha, keys.length, ...keys, ...args]),
  );
}

/** The answer of `bySha`, or, when the server does not know the script (NOSCRIPT), of the script sent in full. */
function withSourceFallback(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  bySha: Promise<unknown>,
): Promise<unknown> {
  return bySha.catch((error: unknown) => {
    if (!isNoScript(error)) throw error;
    return client.eval(script.source, keys.length, ...keys, ...args);
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
