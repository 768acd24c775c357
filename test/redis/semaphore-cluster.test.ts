import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { redisSemaphoreKeys } from '../../lib/backends/redis/semaphore-keys.js';
import { RedisCluster } from '../harness/redis-cluster.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('redis semaphores on a 3-master Redis Cluster (ioredis Cluster client)', () => {
  let cluster: RedisCluster;
  const clients: Cluster[] = [];
  const engines: LockEngine[] = [];
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;

  async function newEngine(): Promise<LockEngine> {
    const client = new Cluster(cluster.startupNodes, { enableAutoPipelining: true });
    clients.push(client);
    await new Promise((resolve, reject) => {
      client.once('ready', resolve);
      client.once('error', reject);
    });
    const engine = new LockEngine(await createLockBackend({ type: 'redis', client }), {
      leaseMs: 5_000,
      waitMs: 10_000,
    });
    engines.push(engine);
    return engine;
  }

  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    await Promise.allSettled(clients.map((client) => client.quit()));
    await cluster?.stop();
  }, 30_000);

  it("puts a semaphore's set, fence counter and channel in the slot of the key's lock, even for keys with braces", async () => {
    for (const storeKey of ['lock:plain', 'lock:{user}:1', 'lock:}{', 'lock:{}', 'lock:\ud800']) {
      const names = [...Object.values(redisSemaphoreKeys(storeKey)), redisLockKeys(storeKey).lock];
      const slots = new Set(
        await Promise.all(names.map((name) => cluster.cli(cluster.ports[0], 'CLUSTER', 'KEYSLOT', name))),
      );
      expect(slots.size).toBe(1);
    }
  });

  it('never lets more than `permits` holders in across instances, and a release wakes a waiter of the other instance', async () => {
    const [a, b] = [await newEngine(), await newEngine()];
    for (const k of [key('sem'), key('{tagged}')]) {
      let inside = 0;
      let maxInside = 0;
      const work = (engine: LockEngine) =>
        engine.withLock(
          k,
          async () => {
            maxInside = Math.max(maxInside, ++inside);
            await delay(10);
            inside--;
          },
          { permits: 2 },
        );
      const startedAt = performance.now();
      await Promise.all(Array.from({ length: 12 }, (_, i) => work(i % 2 ? a : b)));
      expect(maxInside).toBe(2);
      // Six rounds of holders: without release messages each round would wait for the first lease to lapse (5 s).
      expect(performance.now() - startedAt).toBeLessThan(4_000);
    }
  }, 30_000);
});
