import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { createLockBackend, InvalidLockArgumentError, LockEngine } from '../../lib/index.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { redisSemaphoreKeys } from '../../lib/backends/redis/semaphore-keys.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/server-process.js';

/** Short, so that the tests see counters expire; leases are longer than it on purpose. */
const IDLE_MS = 150;

describe('redis: fence counters expire once the key is idle, and fences keep increasing', () => {
  let server: RedisServer;
  let redis: Redis;
  let engine: LockEngine;
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
  const fenceKey = (name: string) => redisLockKeys(`lock:${name}`).fence;
  /** Redis's clock in µs. */
  const redisMicros = async () => {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1_000_000 + Number(micros);
  };

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
    engine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url, idleKeyTtlMs: IDLE_MS }), {
      leaseMs: 600,
      waitMs: 0,
    });
  }, 30_000);

  afterAll(async () => {
    await engine?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('refuses an idleKeyTtlMs that is not a whole number of ms >= 1', async () => {
    for (const idleKeyTtlMs of [0, -1, 1.5, Number.NaN, '1000', 40_000_000_000]) {
      await expect(createLockBackend({ type: 'redis', url: server.url, idleKeyTtlMs } as never)).rejects.toThrow(
        InvalidLockArgumentError,
      );
    }
  });

  it('gives a key locked again after its counter expired a larger fence: the clock passed every fence handed out', async () => {
    const name = key('expired');
    const first = await engine.acquire(name);
    await first.release();
    const ttl = await redis.pttl(fenceKey(name));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(IDLE_MS);
    await waitUntil('the fence counter to expire', async () => (await redis.exists(fenceKey(name))) === 0, 5_000, 10);
    expect(await redisMicros()).toBeGreaterThan(first.fence! + IDLE_MS * 1000);
    const second = await engine.acquire(name);
    expect(second.fence!).toBeGreaterThan(first.fence!);
    await second.release();
  });

  it('keeps a counter that runs ahead of the clock until the clock has passed it by the idle time', async () => {
    const name = key('ahead');
    const aheadUs = 1_500_000;
    // As after a burst of local turns (TURN_FENCES reserved per acquisition) on one key: the counter is ahead of Redis's clock.
    const counter = (await redisMicros()) + aheadUs;
    await redis.set(fenceKey(name), String(counter));
    const first = await engine.acquire(name);
    expect(first.fence).toBe(counter + 1);
    await first.release();
    // Released: idle + how far ahead from now; a TTL of the idle time alone would let it expire 1.5 s too early.
    expect(await redis.pttl(fenceKey(name))).toBeGreaterThan(IDLE_MS + 1_400);
    await waitUntil('the fence counter to expire', async () => (await redis.exists(fenceKey(name))) === 0, 10_000, 10);
    expect(await redisMicros()).toBeGreaterThan(first.fence! + IDLE_MS * 1000);
    const second = await engine.acquire(name);
    expect(second.fence!).toBeGreaterThan(first.fence!);
    await second.release();
  });

  it('moves a counter of an earlier version (small, no TTL) to the clock, with a TTL', async () => {
    const name = key('legacy');
    await redis.set(fenceKey(name), '41');
    const lock = await engine.acquire(name);
    expect(lock.fence!).toBeGreaterThan(1_700_000_000_000_000);
    await lock.release();
    expect(await redis.pttl(fenceKey(name))).toBeGreaterThan(0);
  });

  it.each([
    ['an exclusive lock', { mode: 'exclusive' as const }],
    ['a read lock', { mode: 'read' as const }],
    ['a fair lock', { fair: true }],
  ])('keeps the fence counter of %s held (and renewed) for longer than idleKeyTtlMs', async (_kind, options) => {
    const name = key('held');
    const lock = await engine.acquire(name, { ...options, leaseMs: 1_000 });
    // Twice idle + lease, renewed every lease/3: without renewals keeping it, the counter would go after idle + lease.
    const heldUntil = Date.now() + 2 * (IDLE_MS + 1_000);
    await waitUntil('idle + lease to pass twice', () => Date.now() >= heldUntil, 5_000, 25);
    expect(lock.signal.aborted).toBe(false);
    expect(await redis.exists(fenceKey(name))).toBe(1);
    expect(Number(await redis.get(fenceKey(name)))).toBe(lock.fence);
    await lock.release();
  });

  it('never shortens the counter of a long read lease when a short one joins, nor of a long permit', async () => {
    const name = key('shared');
    const long = await engine.acquire(name, { mode: 'read', leaseMs: 60_000 });
    const short = await engine.acquire(name, { mode: 'read', leaseMs: 200 });
    expect(await redis.pttl(fenceKey(name))).toBeGreaterThan(59_000);
    const counterKey = redisSemaphoreKeys(`lock:${name}`).fence;
    const longPermit = await engine.semaphore(name, 2, { leaseMs: 60_000 });
    const shortPermit = await engine.semaphore(name, 2, { leaseMs: 200 });
    expect(await redis.pttl(counterKey)).toBeGreaterThan(59_000);
    await Promise.all([short.release(), long.release(), shortPermit.release(), longPermit.release()]);
  });

  it('keeps the fence counter of a semaphore permit held (and renewed) for longer than idleKeyTtlMs, and lets it expire after', async () => {
    const name = key('permit');
    const counterKey = redisSemaphoreKeys(`lock:${name}`).fence;
    const permit = await engine.semaphore(name, 2, { leaseMs: 1_000 });
    const heldUntil = Date.now() + 2 * (IDLE_MS + 1_000);
    await waitUntil('idle + lease to pass twice', () => Date.now() >= heldUntil, 5_000, 25);
    expect(permit.signal.aborted).toBe(false);
    expect(Number(await redis.get(counterKey))).toBe(permit.fence);
    await permit.release();
    await waitUntil(
      'the semaphore keys to expire',
      async () => (await redis.exists(counterKey, redisSemaphoreKeys(`lock:${name}`).permits)) === 0,
      5_000,
      10,
    );
    const next = await engine.semaphore(name, 2);
    expect(next.fence!).toBeGreaterThan(permit.fence!);
    await next.release();
  });
});

describe('redis: idleKeyTtlMs counts from the end of the hold (issue 26: 1.5 s idle, 30 s leases)', () => {
  const IDLE = 1_500;
  const LEASE = 30_000;
  let server: RedisServer;
  let redis: Redis;
  let engine: LockEngine;
  let prefix: string;
  const counter = (name: string) => redisLockKeys(`${prefix}${name}`).fence;
  const permitCounter = (name: string) => redisSemaphoreKeys(`${prefix}${name}`).fence;
  /** Every Redis key this engine left behind (its keys all start with `{prefix`). */
  const keysLeft = async () => (await redis.keys(`{${prefix}*`)).length;

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
  }, 30_000);
  beforeEach(async () => {
    prefix = `idle-${randomUUID().slice(0, 8)}:`;
    engine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url, idleKeyTtlMs: IDLE }), {
      keyPrefix: prefix,
      leaseMs: LEASE,
      waitMs: 0,
    });
  });
  afterEach(() => engine.close());
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('200 keys locked and released once leave 200 counters that all go about 1.5 s after their release, not 31.5 s', async () => {
    const names = Array.from({ length: 200 }, (_, i) => `order:${i}`);
    await Promise.all(names.map((name) => engine.withLock(name, () => undefined)));
    const releasedAt = Date.now();
    expect(await keysLeft()).toBe(200);
    const ttls = await Promise.all(names.map((name) => redis.pttl(counter(name))));
    expect(Math.min(...ttls)).toBeGreaterThan(0);
    expect(Math.max(...ttls)).toBeLessThanOrEqual(IDLE + 1);
    // Bounded poll on the key count: before the fix they stayed for lease + idle (31.5 s).
    await waitUntil("the released keys' counters to expire", async () => (await keysLeft()) === 0, 6_000, 50);
    expect(Date.now() - releasedAt).toBeGreaterThanOrEqual(IDLE - 1_000);
  }, 15_000);

  it('read locks: the counter keeps the lease while a reader holds, and gets the idle time when the last reader leaves', async () => {
    const first = await engine.acquire('doc', { mode: 'read' });
    const second = await engine.acquire('doc', { mode: 'read' });
    await first.release();
    expect(await redis.pttl(counter('doc'))).toBeGreaterThan(LEASE);
    await second.release();
    expect(await redis.pttl(counter('doc'))).toBeLessThanOrEqual(IDLE + 1);
  });

  it('semaphores: the counter keeps the lease while a permit is held, and gets the idle time when the last permit goes', async () => {
    const first = await engine.semaphore('pool', 2);
    const second = await engine.semaphore('pool', 2);
    await first.release();
    expect(await redis.pttl(permitCounter('pool'))).toBeGreaterThan(LEASE);
    await second.release();
    expect(await redis.pttl(permitCounter('pool'))).toBeLessThanOrEqual(IDLE + 1);
  });

  it('fair locks and local hand-offs: the counter gets the idle time at the last release', async () => {
    const fair = await engine.acquire('queue', { fair: true });
    expect(await redis.pttl(counter('queue'))).toBeGreaterThan(LEASE);
    await fair.release();
    expect(await redis.pttl(counter('queue'))).toBeLessThanOrEqual(IDLE + 1);
    const holder = await engine.acquire('turns');
    const waiters = [1, 2, 3].map(() => engine.withLock('turns', () => undefined, { waitMs: 5_000 }));
    await holder.release();
    await Promise.all(waiters);
    expect(await redis.pttl(counter('turns'))).toBeLessThanOrEqual(IDLE + 1);
  });

  it("a lapsed lease (a holder that stopped renewing) leaves its counter lease + idle from its acquisition; the next holder's fence is larger", async () => {
    const backend = await createLockBackend({ type: 'redis', url: server.url, idleKeyTtlMs: IDLE });
    try {
      // A claim without an engine: nobody renews it, as with a holder that crashed.
      const claim = backend.claim({
        key: `${prefix}lapse`,
        owner: 'crashed',
        leaseMs: 300,
        mode: 'exclusive',
        fair: false,
        permits: undefined,
        onLost: () => undefined,
      });
      const acquiredAt = Date.now();
      const taken = await claim.tryAcquire();
      if (!taken.acquired) throw new Error('not acquired');
      expect(await redis.pttl(counter('lapse'))).toBeGreaterThan(IDLE);
      expect(await redis.pttl(counter('lapse'))).toBeLessThanOrEqual(300 + IDLE + 1);
      await waitUntil(
        'the lease to lapse in Redis',
        async () => (await redis.exists(redisLockKeys(`${prefix}lapse`).lock)) === 0,
        5_000,
        10,
      );
      // Still lease + idle from the acquisition (not cut at the lapse): what is left of 300 + 1500 ms.
      expect(await redis.pttl(counter('lapse'))).toBeGreaterThan(300 + IDLE - (Date.now() - acquiredAt) - 50);
      const next = await engine.acquire('lapse');
      expect(next.fence!).toBeGreaterThan(taken.fence!);
      await next.release();
    } finally {
      await backend.close();
    }
  });

  it("fences keep increasing across the counter's expiry after a release", async () => {
    const first = await engine.acquire('again');
    await first.release();
    await waitUntil('the counter to expire', async () => (await redis.exists(counter('again'))) === 0, 6_000, 50);
    const second = await engine.acquire('again');
    expect(second.fence!).toBeGreaterThan(first.fence!);
    await second.release();
  }, 15_000);
});
