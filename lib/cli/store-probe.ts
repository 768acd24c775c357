import { lookup } from 'node:dns/promises';
import { createConnection } from 'node:net';
import { loadOptional } from '../util/load-optional.js';
import { OVERDUE, withinMs } from '../util/time-limit.js';
import { redisConstructorOf, type IoredisModule, type RedisClient } from '../backends/redis/redis-client.js';
import { diagnose, type Diagnosis } from './failure-cause.js';
import type { StoreAddress } from './option-addresses.js';

/** How long a probe of one server may take. */
const PROBE_MS = 3_000;

/**
 * Connects once to one server of a store, to learn why the store failed when its driver's error
 * does not say (ioredis: "Reached the max retries per request limit"). Redis servers are probed
 * with ioredis (so a refused login shows), others with a TCP connection. Resolves undefined when
 * the server answered.
 */
export async function probe(address: StoreAddress): Promise<Diagnosis | undefined> {
  return address.url === undefined ? probeTcp(address) : probeRedis(address.url);
}

async function probeTcp({ host, port }: StoreAddress): Promise<Diagnosis | undefined> {
  try {
    await lookup(host);
  } catch (error) {
    return diagnose(error) ?? { cause: 'dns', detail: (error as Error).message };
  }
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: PROBE_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve({ cause: 'timeout', detail: `no TCP connection within ${PROBE_MS} ms` });
    });
    socket.once('error', (error) => resolve(diagnose(error)));
  });
}

async function probeRedis(url: string): Promise<Diagnosis | undefined> {
  const Redis = redisConstructorOf(await loadOptional<IoredisModule>('ioredis', "The 'redis' backend"))!;
  // One attempt, no retries; a short disconnectTimeout, as ioredis otherwise keeps the process 2 s after closing a client of a dead server.
  const options = {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: PROBE_MS,
    enableOfflineQueue: false,
    disconnectTimeout: 200,
  };
  const client = new Redis(url, options) as RedisClient & { connect(): Promise<void> };
  // ioredis rejects connect() with "Connection is closed"; the reason (ECONNREFUSED, WRONGPASS, ...) comes as an event.
  const errors: unknown[] = [];
  client.on('error', (error: unknown) => errors.push(error));
  try {
    await withinMs(
      client.connect().then(() => client.ping()),
      PROBE_MS,
    );
    return undefined;
  } catch (error) {
    const failure =
      error === OVERDUE ? Object.assign(new Error(`no answer within ${PROBE_MS} ms`), { code: 'ETIMEDOUT' }) : error;
    return errors.map((emitted) => diagnose(emitted)).find(Boolean) ?? diagnose(failure);
  } finally {
    client.disconnect();
  }
}
