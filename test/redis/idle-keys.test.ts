import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
    engine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url, idleKeyTtlMs: IDLE_MS }), { leaseMs: 600, waitMs: 0 });
  }, 30_000);

  afterAll(async () => {
    await engine?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('refuses an idleKeyTtlMs that is not a whole number of ms >= 1', async () => {
    for (const idleKeyTtlMs of [0, -1, 1.5, Number.NaN, '1000', 40_000_000_000]) {
      await expect(createLockBackend({ type: 'redis', url: server.url, idleKeyTtlMs } as never)).rejects.toThrow(InvalidLockArgumentError);
    }
  });

  it('gives a key locked again after its counter expired a larger fence: the clock passed every fence handed out', async () => {
    const name = key('expired');
    const first = await engine.acquire(name);
    await first.release();
    const ttl = await redis.pttl(fenceKey(name));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600 + IDLE_MS + 1);
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
    // idle + lease + how far ahead: a TTL of idle + lease alone would let it expire 1.5 s too early.
    expect(await redis.pttl(fenceKey(name))).toBeGreaterThan(IDLE_MS + 600 + 1_400);
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
    await waitUntil('the semaphore keys to expire', async () => (await redis.exists(counterKey, redisSemaphoreKeys(`lock:${name}`).permits)) === 0, 5_000, 10);
    const next = await engine.semaphore(name, 2);
    expect(next.fence!).toBeGreaterThan(permit.fence!);
    await next.release();
  });
});
