import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine, type Lock } from '../../lib/index.js';
import { redisSemaphoreKeys } from '../../lib/backends/redis/semaphore-keys.js';
import { acquirePermit, releasePermit, renewPermit } from '../../lib/backends/redis/semaphore-scripts.js';
import type { RedisClient } from '../../lib/backends/redis/redis-client.js';
import { waitUntil } from '../harness/server-process.js';
import { RedisServer } from '../harness/redis-server.js';

/** How long the fence counter outlives the lease in these calls. */
const IDLE_MS = 60_000;

describe('redis semaphore scripts', () => {
  let server: RedisServer;
  let redis: Redis;
  let client: RedisClient;
  let engine: LockEngine;
  const storeKey = () => `lock:sem-scripts:${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
    client = redis;
    engine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }), {
      keyPrefix: '',
      leaseMs: 5_000,
    });
  }, 30_000);

  afterAll(async () => {
    await engine?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('takes at most `permits` entries, and a resent attempt of the same owner keeps its one entry and fence', async () => {
    const keys = redisSemaphoreKeys(storeKey());
    const first = await acquirePermit(client, keys, 'o1', 2, 5_000, IDLE_MS);
    expect(await acquirePermit(client, keys, 'o1', 2, 5_000, IDLE_MS)).toEqual(first);
    expect(await acquirePermit(client, keys, 'o2', 2, 5_000, IDLE_MS)).toMatchObject({ acquired: true });
    const busy = await acquirePermit(client, keys, 'o3', 2, 5_000, IDLE_MS);
    expect(busy).toMatchObject({ acquired: false });
    expect(busy.acquired === false && busy.holderTtlMs).toBeGreaterThan(4_000);
    expect(await redis.zcard(keys.permits)).toBe(2);
    // Each claim checks its own count: a caller that says 3 gets in.
    expect(await acquirePermit(client, keys, 'o3', 3, 5_000, IDLE_MS)).toMatchObject({ acquired: true });
  });

  it('keeps the set alive as long as its longest lease (a shorter renewal never shortens it), so an abandoned semaphore vanishes', async () => {
    const keys = redisSemaphoreKeys(storeKey());
    await acquirePermit(client, keys, 'long', 5, 2_000, IDLE_MS);
    await acquirePermit(client, keys, 'short', 5, 300, IDLE_MS);
    const ttl = await redis.pttl(keys.permits);
    expect(ttl).toBeGreaterThan(1_500);
    expect(ttl).toBeLessThanOrEqual(2_000);
    expect(await renewPermit(client, keys, 'long', 200, IDLE_MS)).toBe(true);
    expect(await redis.pttl(keys.permits)).toBeGreaterThan(1_000); // a shorter renewal never shortens the set
    await waitUntil('the abandoned set to expire', async () => (await redis.exists(keys.permits)) === 0, 5_000);
  });

  it('neither renews nor counts a lapsed permit as released, even before another attempt purged it', async () => {
    const keys = redisSemaphoreKeys(storeKey());
    await acquirePermit(client, keys, 'lapsing', 1, 100, IDLE_MS);
    await waitUntil(
      'the permit to lapse',
      async () => Number(await redis.zscore(keys.permits, 'lapsing')) <= Date.now() - 50,
      2_000,
    );
    expect(await renewPermit(client, keys, 'lapsing', 5_000, IDLE_MS)).toBe(false);
    expect(await releasePermit(client, keys, 'lapsing', 1_000)).toBe(false);
    expect(await releasePermit(client, keys, 'never-held', 1_000)).toBe(false);
  });

  it('gives a waiter the permit of a holder that stopped renewing when its lease lapses, though no release is published', async () => {
    const key = storeKey();
    const keys = redisSemaphoreKeys(key);
    await acquirePermit(client, keys, 'crashed', 1, 800, IDLE_MS);
    const startedAt = performance.now();
    let got: Lock | undefined;
    const waiter = engine.semaphore(key, 1, { waitMs: 5_000 }).then((lock) => (got = lock));
    await waitUntil('the waiter to be busy', async () => (await redis.pubsub('NUMSUB', keys.channel))[1] === 1, 2_000);
    expect(got).toBeUndefined();
    await waiter;
    const waitedMs = performance.now() - startedAt;
    expect(waitedMs).toBeGreaterThan(600);
    expect(waitedMs).toBeLessThan(1_800);
    await got!.release();
  });
});
