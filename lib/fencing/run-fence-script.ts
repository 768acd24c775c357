import { createHash } from 'node:crypto';
import type { FenceRedisClient } from './fence-redis-client.js';

/** A Lua script with its SHA1, as EVALSHA wants it. */
export interface FenceScript {
  readonly source: string;
  readonly sha: string;
}

export function fenceScript(source: string): FenceScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Runs `script` by its SHA and sends the source only when the server does not know it (NOSCRIPT:
 * after a restart, a SCRIPT FLUSH, or on a Cluster node that never saw it). ioredis routes both by
 * the first key's slot.
 */
export async function runFenceScript(
  client: FenceRedisClient,
  script: FenceScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
    return client.eval(script.source, keys.length, ...keys, ...args);
  }
}
