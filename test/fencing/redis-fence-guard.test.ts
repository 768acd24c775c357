import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import {
  InvalidLockArgumentError,
  LockEngine,
  LockLostError,
  MemoryBackend,
  RedisFenceGuard,
  StaleFenceError,
} from '../../lib/index.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { RedisServer } from '../harness/redis-server.js';

interface Target {
  client: Redis | Cluster;
  /** The Cluster slot of a key (a single server: the slot it would have). */
  slot(key: string): Promise<number>;
  stop(): Promise<void>;
}

async function singleServer(): Promise<Target> {
  const server = await RedisServer.start();
  const client = new Redis(server.port, '127.0.0.1');
  return {
    client,
    slot: async (key) => Number(await client.call('CLUSTER', 'KEYSLOT', key).catch(() => -1)),
    async stop() {
      client.disconnect();
      await server.kill();
    },
  };
}

async function threeMasters(): Promise<Target> {
  const cluster = await RedisCluster.start(3);
  const client = new Cluster(cluster.startupNodes);
  await new Promise((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
  return {
    client,
    slot: async (key) => Number(await cluster.cli(cluster.ports[0], 'CLUSTER', 'KEYSLOT', key)),
    async stop() {
      await client.quit().catch(() => undefined);
      await cluster.stop();
    },
  };
}

describe.each([
  ['a single Redis server', singleServer, false],
  ['a 3-master Redis Cluster', threeMasters, true],
])('RedisFenceGuard on %s', (_name, start, isCluster) => {
  let target: Target;
  let guard: RedisFenceGuard;
  let redis: Redis | Cluster;
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
  const stale = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(StaleFenceError);
    return error as StaleFenceError;
  };

  beforeAll(async () => {
    target = await start();
    redis = target.client;
    guard = new RedisFenceGuard(redis);
  }, 60_000);

  afterAll(async () => {
    await target?.stop();
  }, 30_000);

  it('set: writes with a fence at or above the highest, refuses a lower one and writes nothing', async () => {
    const k = key('stock');
    await guard.set(k, 'a', 10);
    await guard.set(k, 'b', 10);
    await guard.set(k, 'c', 12);
    expect(await redis.get(k)).toBe('c');
    const error = await stale(guard.set(k, 'stale', 11));
    expect([error.name, error.resource, error.fence, error.highest]).toEqual(['StaleFenceError', k, 11, 12]);
    expect(await redis.get(k)).toBe('c');
    expect(await redis.get(`{${k}}:highest-fence`)).toBe('12');
  });

  it('set with px: the value expires, the fence stays', async () => {
    const k = key('session');
    await guard.set(k, 'v', 5, { px: 60_000 });
    const pttl = await redis.pttl(k);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(60_000);
    expect(await redis.pttl(`{${k}}:highest-fence`)).toBe(-1);
    await expect(guard.set(k, 'v', 5, { px: 0 })).rejects.toThrow(InvalidLockArgumentError);
  });

  it('keeps 16-digit clock-floored fences exact', async () => {
    const k = key('clock');
    const fence = 1_764_201_234_567_891;
    await guard.set(k, 'a', fence);
    expect((await stale(guard.set(k, 'b', fence - 1))).highest).toBe(fence);
    await guard.set(k, 'c', fence + 1);
    expect(await redis.get(k)).toBe('c');
  });

  it('del: deletes with a current fence and keeps the fence, so a stale holder cannot bring the key back', async () => {
    const k = key('gone');
    await guard.set(k, 'a', 3);
    await stale(guard.del(k, 2));
    expect(await redis.get(k)).toBe('a');
    await guard.del(k, 4);
    expect(await redis.exists(k)).toBe(0);
    expect((await stale(guard.set(k, 'back', 3))).highest).toBe(4);
    expect(await redis.exists(k)).toBe(0);
  });

  it('hset: writes the fields with a current fence, refuses a stale one untouched', async () => {
    const k = key('order');
    await guard.hset(k, { status: 'paid', total: '12' }, 7);
    await stale(guard.hset(k, { status: 'cancelled' }, 6));
    expect(await redis.hgetall(k)).toEqual({ status: 'paid', total: '12' });
    await guard.hset(k, { status: 'shipped' }, 8);
    expect(await redis.hget(k, 'status')).toBe('shipped');
    await expect(guard.hset(k, {}, 9)).rejects.toThrow(InvalidLockArgumentError);
  });

  it('eval: the script sees its own KEYS and ARGV, its result comes back, a stale fence runs nothing', async () => {
    const tag = key('cart');
    const [a, b] = [`{${tag}}:items`, `{${tag}}:count`];
    const script = `redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[2])
return {#KEYS, #ARGV, KEYS[2], ARGV[1], redis.call('GET', KEYS[2])}`;
    expect(await guard.eval(script, [a, b], ['apple', '3'], 20)).toEqual([2, 2, b, 'apple', '3']);
    await stale(guard.eval(script, [a, b], ['pear', '1'], 19));
    expect(await redis.lrange(a, 0, -1)).toEqual(['apple']);
    expect(await redis.get(b)).toBe('3');
    expect(await guard.eval('return nil', [a], [], 20)).toBeNull();
    expect(await guard.eval('-- a comment on the last line', [a], [], 21)).toBeNull();
  });

  it('eval: an error of the script is thrown and leaves the fence where it was', async () => {
    const k = key('failing');
    await guard.set(k, 'a', 30);
    await expect(guard.eval(`return redis.error_reply('NOPE not today')`, [k], [], 31)).rejects.toThrow(
      'NOPE not today',
    );
    await expect(guard.eval(`redis.call('HSET', KEYS[1], 'f', 'v')`, [k], [], 32)).rejects.toThrow(/WRONGTYPE/);
    expect(await redis.get(`{${k}}:highest-fence`)).toBe('30');
    await expect(guard.eval('return 1', [], [], 33)).rejects.toThrow(InvalidLockArgumentError);
  });

  it('keeps working after the server forgets its scripts (NOSCRIPT: the source is sent again)', async () => {
    const k = key('flushed');
    await guard.set(k, 'a', 1);
    if (isCluster) await Promise.all((redis as Cluster).nodes('master').map((node) => node.script('FLUSH')));
    else await (redis as Redis).script('FLUSH');
    await guard.set(k, 'b', 2);
    await stale(guard.set(k, 'c', 1));
    expect(await redis.get(k)).toBe('b');
  });

  it("puts the fence key in the data key's slot: plain keys, hash-tagged keys and keys with a lone {", async () => {
    for (const k of [
      key('plain'),
      `{user:${randomUUID().slice(0, 6)}}:profile`,
      `orders:{eu}:${randomUUID().slice(0, 6)}`,
      key('a{b'),
    ]) {
      await guard.set(k, 'v', 1);
      const fenceKeys = (await scanAll(target, '*highest-fence*')).filter(
        (name) => name.endsWith(k) || name === `{${k}}:highest-fence`,
      );
      expect(fenceKeys).toHaveLength(1);
      expect(await target.slot(fenceKeys[0])).toBe(await target.slot(k));
    }
    // A '}' without a tag: the key hashes as a whole, and no tag can name it.
    for (const k of ['a}b', '{}x']) await expect(guard.set(k, 'v', 1)).rejects.toThrow(/hash tag/);
  });

  it('keeps the slot when the client has a keyPrefix (ioredis puts it before both keys)', async () => {
    const prefixed = isCluster
      ? new Cluster(
          (redis as Cluster).nodes('master').map((node) => ({ host: '127.0.0.1', port: node.options.port! })),
          { keyPrefix: 'app:' },
        )
      : new Redis((redis as Redis).options.port!, '127.0.0.1', { keyPrefix: 'app:' });
    try {
      const prefixedGuard = new RedisFenceGuard(prefixed);
      for (const k of [key('plain'), `{user:${randomUUID().slice(0, 6)}}:cart`]) {
        await prefixedGuard.set(k, 'v', 3);
        await stale(prefixedGuard.set(k, 'w', 2));
        expect(await redis.get(`app:${k}`)).toBe('v');
        const fenceKeys = (await scanAll(target, '*highest-fence*')).filter(
          (name) => name.startsWith('app:') && name.includes(k),
        );
        expect(fenceKeys).toHaveLength(1);
        expect(await target.slot(fenceKeys[0])).toBe(await target.slot(`app:${k}`));
      }
    } finally {
      prefixed.disconnect();
    }
  });

  it('spreads over every master of a Cluster', async () => {
    if (!isCluster) return;
    const keys = Array.from({ length: 30 }, (_, i) => key(`spread-${i}`));
    for (const k of keys) await guard.set(k, 'v', 1);
    const masters = (redis as Cluster).nodes('master');
    const perMaster = await Promise.all(
      masters.map(async (node) => (await node.keys('*spread-*:highest-fence')).length),
    );
    expect(perMaster.every((n) => n > 0)).toBe(true);
    expect(perMaster.reduce((sum, n) => sum + n, 0)).toBe(30);
  });

  it('takes a Lock: a held memory-backend lock writes, a released one is refused with LockLostError', async () => {
    const engine = new LockEngine(new MemoryBackend());
    try {
      const k = key('locked');
      const lock = await engine.acquire(k);
      await guard.set(k, 'mine', lock);
      await lock.release();
      await expect(guard.set(k, 'late', lock)).rejects.toBeInstanceOf(LockLostError);
      expect(await redis.get(k)).toBe('mine');
    } finally {
      await engine.close();
    }
  });
});

async function scanAll(target: Target, pattern: string): Promise<string[]> {
  const client = target.client;
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const names = await Promise.all(nodes.map((node) => node.keys(pattern)));
  return names.flat();
}
