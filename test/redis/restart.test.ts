import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { RedisBackend } from '../../lib/backends/redis/redis-backend.js';
import { createLockBackend, LockBackendError, LockEngine, LockLostError, type LockEvent } from '../../lib/index.js';
import { COMMAND_BOUND_MS } from '../../lib/backends/redis/redis-connection.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/server-process.js';
import { asleepOn } from '../support/internal-seams.js';

describe('redis backend across a Redis restart (no persistence: the data is gone)', () => {
  let server: RedisServer;
  const engines: LockEngine[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  const newEngine = async (leaseMs: number) => {
    const engine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }), {
      leaseMs,
      waitMs: 20_000,
    });
    engines.push(engine);
    return engine;
  };

  beforeAll(async () => {
    server = await RedisServer.start();
  }, 30_000);

  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });

  afterEach(async () => {
    await Promise.allSettled(engines.splice(0).map((engine) => engine.close()));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("aborts the holder's signal with LockLostError (its renewal finds the key gone), without a crash", async () => {
    const engine = await newEngine(1_500);
    const events: LockEvent[] = [];
    engine.events.subscribe((event) => events.push(event));
    const lock = await engine.acquire('restart-held');
    const lost = new Promise<number>((resolve) =>
      lock.signal.addEventListener('abort', () => resolve(performance.now())),
    );
    const restartedAt = performance.now();
    await server.restart();
    const lostAfterMs = (await lost) - restartedAt;
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    // Found at the next renewal (every leaseMs / 3), well within one lease.
    expect(lostAfterMs).toBeLessThan(1_500 + 1_000);
    expect(events.filter((event) => event.type === 'lost')).toHaveLength(1);
    await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
    // The backend works again after the restart.
    const again = await engine.acquire('restart-held', { waitMs: 0 });
    await again.release();
    process.stdout.write(
      `redis restart: holder's signal aborted ${Math.round(lostAfterMs)} ms after the restart began (lease 1500 ms)\n`,
    );
  }, 30_000);

  it("wakes a sleeping waiter when its subscriber reconnects, long before the old holder's lease would end", async () => {
    const holder = await newEngine(30_000);
    const waiterEngine = await newEngine(30_000);
    const held = await holder.acquire('restart-wait');
    const backend = waiterEngine.backend as RedisBackend;
    const waiter = waiterEngine.acquire('restart-wait');
    await waitUntil('the waiter asleep', () => asleepOn(backend, 'lock:restart-wait') === 1, 10_000, 5);
    const restartedAt = performance.now();
    await server.restart();
    const next = await waiter;
    const acquiredAfterMs = performance.now() - restartedAt;
    // Its fallback would be the holder's remaining lease (~30 s); the reconnection counts as a possible release.
    expect(acquiredAfterMs).toBeLessThan(5_000);
    await next.release();
    expect(held.signal.aborted).toBe(false); // the old holder learns it at its next renewal (every 10 s)
    process.stdout.write(
      `redis restart: a sleeping waiter got the lock ${Math.round(acquiredAfterMs)} ms after the restart began\n`,
    );
  }, 30_000);

  it('a SIGSTOPped Redis: the holder loses at its lease end, a caller gets LockBackendError (no hang), and all recovers on SIGCONT', async () => {
    const holderEngine = await newEngine(1_000);
    const other = await newEngine(1_000);
    const lock = await holderEngine.acquire('paused');
    const lost = new Promise<number>((resolve) =>
      lock.signal.addEventListener('abort', () => resolve(performance.now())),
    );
    const pausedAt = performance.now();
    server.pause();
    try {
      // Renewal hangs on the stopped server; the local lease clock ends the lock anyway.
      const lostAfterMs = (await lost) - pausedAt;
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(lostAfterMs).toBeLessThan(1_000 + 1_000);
      const triedAt = performance.now();
      const error = await other.acquire('paused', { waitMs: 1_000 }).catch((e: unknown) => e);
      const failedAfterMs = performance.now() - triedAt;
      expect(error).toBeInstanceOf(LockBackendError);
      expect(failedAfterMs).toBeLessThan(COMMAND_BOUND_MS + 3_000);
      process.stdout.write(
        `redis paused: holder lost after ${Math.round(lostAfterMs)} ms (lease 1000 ms); a new acquire failed with LockBackendError after ${Math.round(failedAfterMs)} ms\n`,
      );
    } finally {
      server.resume();
    }
    // Redis expires keys by wall-clock time, so the paused holder's key is gone once it runs again.
    const next = await other.acquire('paused', { waitMs: 5_000 });
    expect(next.fence!).toBeGreaterThan(lock.fence!);
    await next.release();
  }, 30_000);

  it('a SIGSTOPped Redis: a call the engine does not bound (inspect) fails with "Command timed out" within the command bound, on the stuck connection and on the one that replaces it; all recovers on SIGCONT', async () => {
    const engine = await newEngine(10_000);
    await engine.inspect('paused-inspect');
    server.pause();
    const tookMs: number[] = [];
    try {
      // The second call waits behind the replacement connection's ready check, which the stopped server never answers.
      for (let call = 0; call < 2; call++) {
        const startedAt = performance.now();
        await expect(engine.inspect('paused-inspect')).rejects.toThrow('Command timed out');
        tookMs.push(performance.now() - startedAt);
      }
    } finally {
      server.resume();
    }
    for (const ms of tookMs) {
      expect(ms).toBeGreaterThanOrEqual(COMMAND_BOUND_MS - 10);
      expect(ms).toBeLessThan(COMMAND_BOUND_MS + 1_500);
    }
    await expect(engine.inspect('paused-inspect')).resolves.toMatchObject({ key: 'paused-inspect' });
    process.stdout.write(`redis paused: inspect failed after ${tookMs.map(Math.round).join(' and ')} ms\n`);
  }, 30_000);

  it('keeps fences increasing after a restart that lost the fence counter: a fresh counter starts at the server clock in µs', async () => {
    const engine = await newEngine(5_000);
    let before = 0;
    for (let i = 0; i < 3; i++) {
      const lock = await engine.acquire('restart-fence');
      before = lock.fence!;
      await lock.release();
    }
    await server.restart();
    expect(server.cli('EXISTS', '{lock:restart-fence}:fence')).toBe('0');
    const after = await engine.acquire('restart-fence');
    expect(after.fence).toBeGreaterThan(before);
    await after.release();
  }, 30_000);
});
