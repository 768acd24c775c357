import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createLockBackend, LockBackendError, LockEngine, type LockEvent } from '../../lib/index.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { redisSemaphoreKeys } from '../../lib/backends/redis/semaphore-keys.js';
import { RedisServer } from '../harness/redis-server.js';

// `replicas: { min, timeoutMs }` against a real master and replica (REPLICAOF): a granted lock is
// on the replica; with the replica stopped, an acquisition fails as LockBackendError after timeoutMs
// and leaves the key free, and a renewal fails like an unreachable store.
describe('redis backend with `replicas` (master + 1 replica)', () => {
  /** The acknowledgement bound of the rows that stop the replica (they wait it out). */
  const TIMEOUT_MS = 300;
  /** The bound of the rows whose replica runs: generous, so that a loaded machine's slow acknowledgement is not a failure. */
  const LIVE_ACK_MS = 5_000;
  let master: RedisServer;
  let replica: RedisServer;
  let admin: Redis;
  const engines: LockEngine[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  const newEngine = async (
    replicas: { min: number; timeoutMs: number; aof?: boolean } = { min: 1, timeoutMs: LIVE_ACK_MS },
  ) => {
    const engine = new LockEngine(await createLockBackend({ type: 'redis', url: master.url, replicas }), {
      keyPrefix: 'rep:',
      leaseMs: 5_000,
      waitMs: 0,
    });
    engines.push(engine);
    return engine;
  };
  const onReplica = (storeKey: string) => replica.cli('GET', redisLockKeys(storeKey).lock);

  beforeAll(async () => {
    master = await RedisServer.start();
    replica = await RedisServer.startReplica(master);
    admin = new Redis(master.url);
  }, 30_000);

  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });

  afterEach(async () => {
    replica.resume();
    await Promise.allSettled(engines.splice(0).map((engine) => engine.close()));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  afterAll(async () => {
    admin?.disconnect();
    await replica?.stop();
    await master?.stop();
  });

  it('grants a lock only once the replica has it: the key and its fence are on the replica when acquire() resolves', async () => {
    const engine = await newEngine();
    const lock = await engine.acquire('granted');
    // No waiting here: WAIT returned, so the replica applied the script's writes already.
    expect(onReplica('rep:granted')).toMatch(/.+/);
    expect(Number(replica.cli('GET', redisLockKeys('rep:granted').fence))).toBe(lock.fence);
    await lock.extend();
    expect(Number(replica.cli('PTTL', redisLockKeys('rep:granted').lock))).toBeGreaterThan(4_000);
    await lock.release();
  });

  it('counts the lease from before the wait: time spent waiting for the replica is not added to the validity', async () => {
    const engine = await newEngine({ min: 1, timeoutMs: 5_000 });
    replica.pause();
    setTimeout(() => replica.resume(), 600);
    const startedAt = Date.now();
    const lock = await engine.acquire('slow-ack');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(590);
    // The engine's deadline is lease (5 s) from the start of the attempt, not from the acknowledgement.
    expect(lock.expiresAt - startedAt).toBeLessThan(5_000 + 300);
    await lock.release();
  });

  it('does the same for read locks, fair claims and semaphore permits', async () => {
    const engine = await newEngine();
    const reader = await engine.acquire('read', { mode: 'read' });
    expect(replica.cli('ZCARD', redisLockKeys('rep:read').readers)).toBe('1');
    const fair = await engine.acquire('fair', { fair: true });
    expect(onReplica('rep:fair')).toMatch(/.+/);
    const permit = await engine.semaphore('sem', 2);
    expect(replica.cli('ZCARD', redisSemaphoreKeys('rep:sem').permits)).toBe('1');
    await Promise.all([reader.release(), fair.release(), permit.release()]);
  });

  it('with the replica stopped: acquire() fails as LockBackendError (not busy) after timeoutMs, and the key is left free', async () => {
    const engine = await newEngine({ min: 1, timeoutMs: TIMEOUT_MS });
    replica.pause();
    const startedAt = performance.now();
    const error = await engine.acquire('unacked').catch((e: unknown) => e);
    const elapsedMs = performance.now() - startedAt;
    expect(error).toBeInstanceOf(LockBackendError);
    expect((error as Error).message).toMatch(
      /only 0 of the 1 replicas required by `replicas.min` acknowledged the write within 300 ms/,
    );
    expect(elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(await admin.exists(redisLockKeys('rep:unacked').lock)).toBe(0);
    const permitError = await engine.semaphore('unacked-sem', 3).catch((e: unknown) => e);
    expect(permitError).toBeInstanceOf(LockBackendError);
    expect(await admin.zcard(redisSemaphoreKeys('rep:unacked-sem').permits)).toBe(0);

    // Back in sync, the same key is granted (by a store that waits longer for the resumed replica's acknowledgement).
    replica.resume();
    const lock = await (await newEngine()).acquire('unacked');
    expect(lock.fence).toBeGreaterThan(0);
    await lock.release();
  });

  it('with the replica stopped: a renewal fails (extend-failed, the lease is not extended) and the holder keeps its lock until it lapses', async () => {
    const engine = await newEngine({ min: 1, timeoutMs: 1_000 });
    const events: LockEvent[] = [];
    engine.events.subscribe((event) => events.push(event));
    const lock = await engine.acquire('renewal');
    const expiresAt = lock.expiresAt;
    replica.pause();
    const error = await lock.extend().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockBackendError);
    expect(events.map((event) => event.type)).toContain('extend-failed');
    expect(lock.expiresAt).toBe(expiresAt);
    expect(lock.signal.aborted).toBe(false);
    replica.resume();
    await lock.extend();
    expect(lock.expiresAt).toBeGreaterThan(expiresAt);
    await lock.release();
  });

  it('concurrent acquisitions on one connection share a WAIT (one WAIT covers every earlier write)', async () => {
    const engine = await newEngine();
    const waits = () => Number(/cmdstat_wait:calls=(\d+)/.exec(master.cli('INFO', 'commandstats'))?.[1] ?? 0);
    const before = waits();
    const locks = await Promise.all(Array.from({ length: 64 }, (_, i) => engine.acquire(`shared-${i}`)));
    const sent = waits() - before;
    expect(sent).toBeGreaterThanOrEqual(1);
    expect(sent).toBeLessThan(64);
    for (const lock of locks) expect(onReplica(`rep:${lock.key}`)).toMatch(/.+/);
    await Promise.all(locks.map((lock) => lock.release()));
  });

  it('reads the hold back after the WAIT: a lease that ran out while the replica was away does not count as acknowledged', async () => {
    const engine = await newEngine({ min: 1, timeoutMs: 5_000 });
    replica.pause();
    setTimeout(() => replica.resume(), 800);
    const error = await engine.acquire('ran-out', { leaseMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockBackendError);
    expect((error as Error).message).toMatch(/not on the master any more/);
    expect(await admin.exists(redisLockKeys('rep:ran-out').lock)).toBe(0);
  });

  it('counts replicas: min 2 with one replica never gets a lock', async () => {
    const engine = await newEngine({ min: 2, timeoutMs: 100 });
    await expect(engine.acquire('two')).rejects.toThrow(/only 1 of the 2 replicas/);
    expect(await admin.exists(redisLockKeys('rep:two').lock)).toBe(0);
  });

  it('`aof: true` uses WAITAOF, which needs Redis 7.2 (older servers: a clear LockBackendError)', async () => {
    const engine = await newEngine({ min: 1, timeoutMs: 200, aof: true });
    const [major, minor] = master
      .cli('INFO', 'server')
      .match(/redis_version:(\d+)\.(\d+)/)!
      .slice(1)
      .map(Number) as [number, number];
    const error = await engine.acquire('aof').catch((e: unknown) => e);
    if (major > 7 || (major === 7 && minor >= 2)) {
      // The replica runs without appendonly: it never acknowledges an fsync.
      expect((error as Error).message).toMatch(/only 0 of the 1 replicas/);
    } else {
      expect((error as Error).message).toMatch(/`replicas.aof` needs Redis 7.2 or later/);
    }
    expect(error).toBeInstanceOf(LockBackendError);
    expect(await admin.exists(redisLockKeys('rep:aof').lock)).toBe(0);
  });
});
