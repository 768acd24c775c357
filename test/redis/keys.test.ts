import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { RedisServer } from '../harness/redis-server.js';

// ioredis's own slot function (its dependency), as a Cluster client routes commands with it.
const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

const awkward = [
  'lock:plain',
  'lock:{user}:42',
  'lock:{',
  'lock:}',
  'lock:{}',
  'lock:}{',
  'lock:a}b{c}',
  'lock:{{}}',
  '{',
  'lock:\u0000nul\r\n*3\r\n$3\r\nDEL',
  'lock:\ud800',
  'lock:\udc00',
  'lock:😀',
  'lock:ünïcödé',
  `lock:${'x'.repeat(65_536)}`,
  `lock:{${'y'.repeat(65_536)}`,
];

describe('redis key names', () => {
  it.each(awkward.map((key) => [JSON.stringify(key.slice(0, 40)), key]))(
    '%s: lock, fence, channel, readers and queue share one cluster slot',
    (_name, storeKey) => {
      const keys = redisLockKeys(storeKey);
      for (const name of Object.values(keys)) expect(calculateSlot(name)).toBe(calculateSlot(keys.lock));
      // The tag is well formed: it is everything between the first '{' and the first '}' after it.
      const tag = keys.lock.slice(1, keys.lock.indexOf('}'));
      expect(tag.length).toBeGreaterThan(0);
      expect(keys.lock.startsWith('{')).toBe(true);
    },
  );

  it('never gives two store keys the same name, including keys that differ only in braces or lone surrogates', () => {
    const storeKeys = [...awkward, 'lock:\ud801', 'lock:{user}:43', 'lock:user}:42', 'lock:{user:42', 'lock:user:42'];
    const names = storeKeys.flatMap((storeKey) => Object.values(redisLockKeys(storeKey)));
    expect(new Set(names).size).toBe(storeKeys.length * 7);
  });

  it('keeps plain keys readable for operators', () => {
    expect(redisLockKeys('lock:orders:42')).toEqual({
      lock: '{lock:orders:42}',
      fence: '{lock:orders:42}:fence',
      channel: '{lock:orders:42}:released',
      readers: '{lock:orders:42}:readers',
      queue: '{lock:orders:42}:queue',
      queueExpiry: '{lock:orders:42}:queue-expiry',
      waiting: '{lock:orders:42}:waiting',
    });
  });
});

describe('redis backend with awkward keys on a real server', () => {
  let server: RedisServer;
  let a: LockEngine;
  let b: LockEngine;

  beforeAll(async () => {
    server = await RedisServer.start();
    a = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }), { waitMs: 0 });
    b = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }), { waitMs: 0 });
  }, 30_000);

  afterAll(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    await server?.stop();
  });

  it('locks every awkward key exclusively and independently of the others', async () => {
    const keys = [
      ...new Set([
        ...awkward.map((key) => (key.slice('lock:'.length) || key).slice(0, 65_536)),
        'a{b',
        'a}b',
        '\ud801',
      ]),
    ];
    const locks = await Promise.all(keys.map((key) => a.acquire(key)));
    for (const key of keys) expect(await b.tryAcquire(key)).toBeNull();
    await Promise.all(locks.map((lock) => lock.release()));
    const again = await Promise.all(keys.map((key) => b.acquire(key)));
    again.forEach((lock, i) => expect(lock.fence!).toBeGreaterThan(locks[i].fence!));
    await Promise.all(again.map((lock) => lock.release()));
  });

  it('hands a lock with braces in its key to a waiter through pub/sub', async () => {
    const held = await a.acquire('orders:{42}:}', { leaseMs: 20_000 });
    const waiter = b.acquire('orders:{42}:}', { waitMs: 15_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const releasedAt = performance.now();
    await held.release();
    await (await waiter).release();
    expect(performance.now() - releasedAt).toBeLessThan(2_000);
  });
});
