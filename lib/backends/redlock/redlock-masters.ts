import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';
import type { RedlockBackendOptions } from '../backend-options.js';
import { loadOptional } from '../../util/load-optional.js';
import {
  looksLikeIoredisClient,
  redisConstructorOf,
  type IoredisModule,
  type RedisClient,
} from '../redis/redis-client.js';
import { COMMAND_BOUND_MS, OWNED_CLIENT_OPTIONS } from '../redis/redis-connection.js';
import { ReleaseListener } from '../redis/release-listener.js';

/** @internal One independent Redis master: its client, and the subscriber that hears its release messages. */
export interface RedlockMaster {
  readonly index: number;
  readonly client: RedisClient;
  /** Whether the backend created the client (and so closes it). */
  readonly owned: boolean;
  readonly listener: ReleaseListener;
}

/**
 * @internal Connection states in which ioredis would only queue a command until it reconnects:
 * such a master is skipped at once instead of costing a round its timeout (and instead of
 * leaving a queued acquisition to land long after the round was decided).
 */
const DOWN_STATES = new Set(['reconnecting', 'close', 'end']);

/** @internal Whether a command sent now may reach the master soon. */
export function isReachable(master: RedlockMaster): boolean {
  return !DOWN_STATES.has(master.client.status);
}

/** @internal Opens a client per URL (or checks the given clients), in the order given. Throws InvalidLockArgumentError. */
export async function openMasters(options: RedlockBackendOptions): Promise<RedlockMaster[]> {
  if (options.clients !== undefined) {
    return options.clients.map((client, index) => {
      if (!looksLikeIoredisClient(client)) {
        throw new InvalidLockArgumentError(
          `redlock backend: clients[${index}] must be an ioredis Redis client, got ${describe(client)}`,
        );
      }
      return { index, client, owned: false, listener: new ReleaseListener(client) };
    });
  }
  const urls = options.urls!;
  urls.forEach(checkUrl);
  const driver = await loadOptional<IoredisModule>('ioredis', "The 'redlock' backend");
  const Redis = redisConstructorOf(driver);
  if (!Redis)
    throw new InvalidLockArgumentError(
      'The \'redlock\' backend could not find the Redis class in the installed "ioredis" package',
    );
  return urls.map((url, index) => {
    // No offline queue: a master that is not connected right now does not vote in this round,
    // instead of holding a queued acquisition that would land long after the round was decided.
    // A short disconnectTimeout: ioredis otherwise keeps a 2 s timer alive when closing a client whose master is down.
    const client = new Redis(url, {
      ...OWNED_CLIENT_OPTIONS,
      commandTimeout: COMMAND_BOUND_MS,
      enableOfflineQueue: false,
      disconnectTimeout: 200,
    });
    // Failures surface on the commands; without a listener ioredis logs every reconnect attempt.
    client.on('error', () => undefined);
    return { index, client, owned: true, listener: new ReleaseListener(subscriberSource(client)) };
  });
}

/**
 * The listener's subscriber is a `duplicate()` of the client, opened on the first wait. That one
 * does queue its SUBSCRIBE until its master is connected, with no command timer: waits never
 * depend on it (they are bounded by the engine), and a timer on a SUBSCRIBE still queued when
 * the backend closes would keep the process alive for the command timeout.
 */
function subscriberSource(client: RedisClient): RedisClient {
  const duplicate = client.duplicate;
  return {
    duplicate: () => duplicate.call(client, { enableOfflineQueue: true, commandTimeout: undefined }),
  } as RedisClient;
}

/**
 * @internal Resolves once every master has either connected or failed once, or after `timeoutMs`.
 * Never rejects: a master that is down at start-up simply does not vote until it comes back.
 */
export function firstConnections(masters: readonly RedlockMaster[], timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const cleanups: (() => void)[] = [];
    let settled = 0;
    const finish = () => {
      clearTimeout(timer);
      for (const cleanup of cleanups) cleanup();
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    const check = () => {
      if (settled >= masters.length) finish();
    };
    for (const { client } of masters) {
      if (client.status === 'ready' || DOWN_STATES.has(client.status) || client.status === 'wait') {
        settled++;
        continue;
      }
      const onSettled = () => (settled++, cleanup(), check());
      const cleanup = () => {
        for (const event of ['ready', 'close', 'end']) client.off(event, onSettled);
      };
      for (const event of ['ready', 'close', 'end']) client.on(event, onSettled);
      cleanups.push(cleanup);
    }
    check();
  });
}

function checkUrl(url: unknown, index: number): asserts url is string {
  if (typeof url !== 'string')
    throw new InvalidLockArgumentError(`redlock backend: urls[${index}] must be a string, got ${describe(url)}`);
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new InvalidLockArgumentError(`redlock backend: urls[${index}] is not a valid URL: ${describe(url)}`);
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new InvalidLockArgumentError(
      `redlock backend: urls[${index}] must start with redis:// or rediss://, got ${describe(url)}`,
    );
  }
}
