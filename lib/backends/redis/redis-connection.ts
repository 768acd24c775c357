import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';
import type { RedisBackendOptions } from '../backend-options.js';
import { loadOptional } from '../../util/load-optional.js';
import { looksLikeIoredisClient, redisConstructorOf, type IoredisModule, type RedisClient } from './redis-client.js';

/**
 * @internal How long a command of a client the backend created may wait for its answer before it
 * fails ("Command timed out"): a store that accepts connections but does not answer fails a call
 * instead of hanging it. The redis backend bounds its client's commands with one timer
 * (stuck-connection.ts), not with ioredis' `commandTimeout`, which arms a timer per command.
 */
export const COMMAND_BOUND_MS = 5_000;

/** @internal Settings of a client the backend creates from a URL: an unreachable store fails a call in well under a second or two, not never. */
export const OWNED_CLIENT_OPTIONS = {
  // Off: acquire/release go out at once, upkeep is batched per tick by the backend (command-batcher.ts), with no extra tick.
  enableAutoPipelining: false,
  maxRetriesPerRequest: 2,
  connectTimeout: 2_000,
  // Only for closing: how long disconnect() waits for a socket to close before destroying it. ioredis'
  // 2 s default keeps a process alive that long after closing a client of a dead server.
  disconnectTimeout: 200,
} as const;

/** @internal The client to use, and whether the backend created it (and so must close it). */
interface RedisConnection {
  readonly client: RedisClient;
  readonly owned: boolean;
}

/** @internal Validates the options (InvalidLockArgumentError) and returns the user's client or a new one. */
export async function openRedisConnection(options: RedisBackendOptions): Promise<RedisConnection> {
  const { url, client } = options;
  if ((url === undefined) === (client === undefined)) {
    throw new InvalidLockArgumentError("The 'redis' backend needs exactly one of `url` or `client`");
  }
  if (client !== undefined) {
    if (!looksLikeIoredisClient(client)) {
      throw new InvalidLockArgumentError(
        `redis backend: \`client\` must be an ioredis Redis or Cluster client, got ${describe(client)}`,
      );
    }
    return { client, owned: false };
  }
  checkUrl(url);
  const driver = await loadOptional<IoredisModule>('ioredis', "The 'redis' backend");
  const Redis = redisConstructorOf(driver);
  if (!Redis)
    throw new InvalidLockArgumentError(
      'The \'redis\' backend could not find the Redis class in the installed "ioredis" package',
    );
  const created = new Redis(url, OWNED_CLIENT_OPTIONS);
  // Failures surface on the commands (as LockBackendError); without a listener ioredis logs every reconnect attempt.
  created.on('error', () => undefined);
  return { client: created, owned: true };
}

function checkUrl(url: unknown): asserts url is string {
  if (typeof url !== 'string')
    throw new InvalidLockArgumentError(`redis backend: \`url\` must be a string, got ${describe(url)}`);
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new InvalidLockArgumentError(`redis backend: \`url\` is not a valid URL: ${describe(url)}`);
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new InvalidLockArgumentError(
      `redis backend: \`url\` must start with redis:// or rediss://, got ${describe(url)}`,
    );
  }
}
