import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { waitUntil } from '../harness/server-process.js';
import { asleepOn } from '../support/internal-seams.js';

describe('redis backend on a 3-master Redis Cluster (ioredis Cluster client)', () => {
  let cluster: RedisCluster;
  const clients: Cluster[] = [];
  let a: LockEngine;
  let b: LockEngine;
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;

  async function clusterClient(): Promise<Cluster> {
    const client = new Cluster(cluster.startupNodes, { enableAutoPipelining: true });
    clients.push(client);
    await new Promise((resolve, reject) => {
      client.once('ready', resolve);
      client.once('error', reject);
    });
    return client;
  }

  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    a = new LockEngine(await createLockBackend({ type: 'redis', client: await clusterClient() }), {
      leaseMs: 5_000,
      waitMs: 10_000,
    });
    b = new LockEngine(await createLockBackend({ type: 'redis', client: await clusterClient() }), {
      leaseMs: 5_000,
      waitMs: 10_000,
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    await Promise.allSettled(clients.map((client) => client.quit()));
    await cluster?.stop();
  }, 30_000);

  it("puts a lock's key, fence counter, channel, readers and queue in one slot, even for keys with braces", async () => {
    for (const storeKey of ['lock:plain', 'lock:{user}:1', 'lock:}{', 'lock:{}', 'lock:a}b{c', 'lock:\ud800']) {
      const keys = redisLockKeys(storeKey);
      const slots = new Set(
        await Promise.all(Object.values(keys).map((name) => cluster.cli(cluster.ports[0], 'CLUSTER', 'KEYSLOT', name))),
      );
      expect(slots.size).toBe(1);
    }
  });

  it('keeps holders exclusive across instances and loses no update of a counter', async () => {
    const k = key('cluster-counter');
    let counter = 0;
    let inside = 0;
    let maxInside = 0;
    const increment = (engine: LockEngine) =>
      engine.withLock(
        k,
        async () => {
          maxInside = Math.max(maxInside, ++inside);
          const read = counter;
          await new Promise((resolve) => setImmediate(resolve));
          counter = read + 1;
          inside--;
        },
        { waitMs: 20_000 },
      );
    await Promise.all(Array.from({ length: 20 }, (_, i) => increment(i % 2 ? a : b)));
    expect(counter).toBe(20);
    expect(maxInside).toBe(1);
  }, 30_000);

  it('gives strictly increasing fences over successive holders, for many keys on every master', async () => {
    const prefix = `fence-${randomUUID().slice(0, 8)}`;
    for (let n = 0; n < 30; n++) {
      const k = `${prefix}:${n}`;
      let last = 0;
      for (let i = 0; i < 3; i++) {
        const lock = await (i % 2 ? a : b).acquire(k);
        expect(lock.fence!).toBeGreaterThan(last);
        last = lock.fence!;
        await lock.release();
      }
    }
    // The fence counters (which never expire) are on every master: the locks really were sharded.
    for (const port of cluster.ports) {
      const fenceKeys = await cluster.cli(port, '--scan', '--pattern', `{lock:${prefix}:*}:fence`);
      expect(fenceKeys.split('\n').filter(Boolean).length).toBeGreaterThan(0);
    }
  });

  it('wakes a waiter on another instance through the release message, long before the lease ends', async () => {
    for (let n = 0; n < 5; n++) {
      const k = key(`cluster-handoff-${n}`);
      const held = await a.acquire(k, { leaseMs: 20_000 });
      const waiter = b.acquire(k, { waitMs: 15_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const releasedAt = performance.now();
      await held.release();
      const next = await waiter;
      expect(performance.now() - releasedAt).toBeLessThan(2_000);
      await next.release();
    }
  }, 30_000);

  it('shares a key between readers of two instances, queues a writer ahead of later readers, and serves a fair waiter after it, on six keys', async () => {
    for (let n = 0; n < 6; n++) {
      const k = key(`cluster-rw-${n}`);
      const readers = [
        await a.acquire(k, { mode: 'read', waitMs: 0 }),
        await b.acquire(k, { mode: 'read', waitMs: 0 }),
      ];
      const writer = a.acquire(k, { mode: 'write' });
      await waitUntil('the writer queued', () => asleepOn(a.backend, `lock:${k}`) === 1, 5_000, 2);
      expect(await b.tryAcquire(k, { mode: 'read' })).toBeNull(); // a new reader goes behind the writer
      const order: string[] = [];
      const fair = b.acquire(k, { fair: true }).then((lock) => (order.push('fair'), lock.release()));
      await Promise.all(readers.map((lock) => lock.release()));
      const write = await writer;
      order.push('writer');
      expect(write.fence!).toBeGreaterThan(readers[1].fence!);
      await write.release();
      await fair;
      expect(order).toEqual(['writer', 'fair']);
    }
  }, 30_000);

  /** Every page of `list({ prefix, limit })` from `engine`, calling `onPage` after each. */
  async function listAll(
    engine: LockEngine,
    prefix: string,
    limit: number,
    onPage: (keys: string[], cursor: string | undefined) => Promise<void> = async () => {},
  ): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await engine.list({ prefix, limit, cursor });
      expect(page.locks.length).toBeLessThanOrEqual(limit);
      seen.push(...page.locks.map((info) => info.key));
      cursor = page.cursor;
      await onPage(
        page.locks.map((info) => info.key),
        cursor,
      );
    } while (cursor !== undefined && ++pages < 1_000);
    return seen;
  }

  it('lists the held keys of every master, page by page, each once; the cursor names the master it stands in', async () => {
    const prefix = `list-${randomUUID().slice(0, 8)}:`;
    const keys = Array.from({ length: 60 }, (_, n) => `${prefix}${n}`);
    const locks = await Promise.all(keys.map((k, n) => (n % 2 ? a : b).acquire(k, { label: `job ${n}` })));
    const outside = await a.acquire(`other-${prefix}`);
    const stoodIn = new Set<string>();
    const seen = await listAll(b, prefix, 5, async (_keys, cursor) => {
      if (cursor !== undefined) stoodIn.add(cursor.slice(0, cursor.lastIndexOf('/')));
    });
    expect([...seen].sort()).toEqual([...keys].sort());
    // ~20 keys per master, 5 per page: a page ends inside each of the three masters.
    expect([...stoodIn].sort()).toEqual(cluster.ports.map((port) => `127.0.0.1:${port}`).sort());
    const [first] = (await b.list({ prefix: `${prefix}1`, limit: 100 })).locks.filter(
      (info) => info.key === `${prefix}1`,
    );
    expect(first.holders).toMatchObject([{ label: 'job 1' }]);
    await Promise.all([...locks, outside].map((lock) => lock.release()));
    expect(await listAll(b, prefix, 100)).toEqual([]);
  }, 30_000);

  it('lists every key held throughout the listing while the keys already listed are released between pages', async () => {
    const prefix = `churn-${randomUUID().slice(0, 8)}:`;
    const keys = Array.from({ length: 12 }, (_, n) => `${prefix}${n}`);
    const locks = new Map(await Promise.all(keys.map(async (k) => [k, await a.acquire(k)] as const)));
    const seen = await listAll(b, prefix, 1, async (listed) => {
      for (const k of listed) {
        await locks.get(k)?.release();
        locks.delete(k);
      }
    });
    expect([...seen].sort()).toEqual([...keys].sort());
    expect(locks.size).toBe(0);
  }, 30_000);

  it('refuses a cursor that is not one of its own', async () => {
    await expect(b.list({ cursor: 'garbage' })).rejects.toThrow('not a list() cursor');
    await expect(b.list({ cursor: '127.0.0.1:1/x:' })).rejects.toThrow('not a list() cursor');
  });

  it("leaves the user's Cluster client open on close()", async () => {
    const client = await clusterClient();
    const engine = new LockEngine(await createLockBackend({ type: 'redis', client }));
    await (await engine.acquire(key('cluster-close'))).release();
    await engine.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
  });
});
