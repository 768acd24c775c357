import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createLockBackend, LockEngine, LockTimeoutError, type Lock } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { QUEUE_PLACE_TTL_MS, QUEUE_REFRESH_MS } from '../../lib/backends/redis/wait-queue.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/server-process.js';
import { asleepOn } from '../support/internal-seams.js';

const waiterScript = fileURLToPath(new URL('../support/fair-waiter-process.mjs', import.meta.url));

describe('redis fair (FIFO) locks', () => {
  let server: RedisServer;
  let admin: Redis;
  const backends: LockBackend[] = [];
  const engines: LockEngine[] = [];
  const keyPrefix = `fair:${randomUUID().slice(0, 8)}:`;
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
  const queueOf = (k: string) => admin.zrange(redisLockKeys(keyPrefix + k).queue, 0, -1);
  const asleep = (engine: number, k: string) => asleepOn(backends[engine], keyPrefix + k);

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
    for (let i = 0; i < 2; i++) {
      backends.push(await createLockBackend({ type: 'redis', url: server.url }));
      engines.push(new LockEngine(backends[i], { keyPrefix, leaseMs: 5_000, waitMs: 20_000 }));
    }
  }, 30_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    admin?.disconnect();
    await server?.stop();
  });

  /** Starts a fair acquisition on engine `i`; resolves (wrapped, so awaiting does not wait for the lock) once it has the `queued`-th place. */
  async function queueUp(
    i: number,
    k: string,
    queued: number,
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<{ lock: Promise<Lock> }> {
    const lock = engines[i].acquire(k, { fair: true, ...options });
    lock.catch(() => undefined);
    await waitUntil(`waiter ${queued} queued`, async () => (await queueOf(k)).length === queued, 5_000, 2);
    return { lock };
  }

  it('hands the lock to fair waiters of two instances in exactly their arrival order, with increasing fences', async () => {
    const k = key('fifo');
    const holder = await engines[0].acquire(k);
    const order: number[] = [];
    const fences: number[] = [];
    const runs: Promise<void>[] = [];
    for (let n = 0; n < 8; n++) {
      const { lock } = await queueUp(n % 2, k, n + 1);
      runs.push(lock.then(async (held) => (order.push(n), fences.push(held.fence!), held.release())));
    }
    await holder.release();
    await Promise.all(runs);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(fences).toEqual([...fences].sort((x, y) => x - y));
    expect(fences[0]).toBeGreaterThan(holder.fence!);
    expect(await admin.exists(redisLockKeys(keyPrefix + k).queue)).toBe(0);
  }, 30_000);

  it("keeps a waiter's place while it waits longer than a place lasts unrefreshed (the heartbeat)", async () => {
    const k = key('heartbeat');
    const holder = await engines[0].acquire(k, { leaseMs: 60_000 }); // no fallback wake-up during the test
    const { lock: first } = await queueUp(1, k, 1);
    await new Promise((resolve) => setTimeout(resolve, QUEUE_PLACE_TTL_MS + 2 * QUEUE_REFRESH_MS));
    const { lock: second } = await queueUp(0, k, 2);
    const order: string[] = [];
    const done = [
      first.then((lock) => (order.push('first'), lock.release())),
      second.then((lock) => (order.push('second'), lock.release())),
    ];
    await holder.release();
    await Promise.all(done);
    expect(order).toEqual(['first', 'second']);
  }, 30_000);

  it('puts a plain (not fair) claim that finds a queue behind it', async () => {
    const k = key('plain');
    const holder = await engines[0].acquire(k);
    const order: string[] = [];
    const { lock: fair } = await queueUp(1, k, 1);
    const plain = engines[0].acquire(k);
    await waitUntil('the plain claim queued', async () => (await queueOf(k)).length === 2, 5_000, 2);
    const done = [
      fair.then((lock) => (order.push('fair'), lock.release())),
      plain.then((lock) => (order.push('plain'), lock.release())),
    ];
    await holder.release();
    await Promise.all(done);
    expect(order).toEqual(['fair', 'plain']);
  }, 30_000);

  it('keeps fair holders exclusive and their fences increasing under contention', async () => {
    const k = key('counter');
    let counter = 0;
    let inside = 0;
    let maxInside = 0;
    const fences: number[] = [];
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        engines[i % 2].withLock(
          k,
          async (lock) => {
            maxInside = Math.max(maxInside, ++inside);
            fences.push(lock.fence!);
            const read = counter;
            await new Promise((resolve) => setImmediate(resolve));
            counter = read + 1;
            inside--;
          },
          { fair: true },
        ),
      ),
    );
    expect(counter).toBe(30);
    expect(maxInside).toBe(1);
    expect(fences).toEqual([...fences].sort((x, y) => x - y));
    expect(new Set(fences).size).toBe(30);
  }, 30_000);

  it.each(['waitMs elapsed', 'signal aborted'] as const)(
    'a waiter that gives up (%s) leaves the queue at once',
    async (how) => {
      const k = key('give-up');
      const holder = await engines[0].acquire(k, { leaseMs: 60_000 });
      const quitter = new AbortController();
      const { lock: quitting } = await queueUp(
        1,
        k,
        1,
        how === 'waitMs elapsed' ? { waitMs: 300 } : { signal: quitter.signal },
      );
      const { lock: staying } = await queueUp(0, k, 2);
      if (how === 'signal aborted') quitter.abort(new Error('gave up'));
      const error = await quitting.catch((e: unknown) => e);
      if (how === 'waitMs elapsed') expect(error).toBeInstanceOf(LockTimeoutError);
      else expect((error as Error).message).toBe('gave up');
      const gaveUpAt = performance.now();
      await waitUntil('the place given up', async () => (await queueOf(k)).length === 1, 1_000, 2);
      expect(performance.now() - gaveUpAt).toBeLessThan(QUEUE_PLACE_TTL_MS / 4);
      // The one behind gets the lock on the release message, not after the abandoned place lapses.
      const releasedAt = performance.now();
      await holder.release();
      await (await staying).release();
      expect(performance.now() - releasedAt).toBeLessThan(QUEUE_PLACE_TTL_MS / 2);
    },
    30_000,
  );

  it('a fair reader waits behind a queued writer, then shares with the readers behind it', async () => {
    const k = key('fair-read');
    const reader = await engines[0].acquire(k, { mode: 'read' });
    const writer = engines[1].acquire(k, { mode: 'write', fair: true });
    await waitUntil('the writer queued', () => asleep(1, k) === 1, 5_000, 2);
    const late = [
      engines[0].acquire(k, { mode: 'read', fair: true }),
      engines[1].acquire(k, { mode: 'read', fair: true }),
    ];
    await waitUntil('the readers queued', async () => (await queueOf(k)).length === 3, 5_000, 2);
    await reader.release();
    const write = await writer;
    expect(await engines[0].tryAcquire(k, { mode: 'read' })).toBeNull();
    await write.release();
    const reads = await Promise.all(late);
    expect(reads.every((lock) => !lock.signal.aborted)).toBe(true);
    expect(reads[0].fence!).toBeGreaterThan(write.fence!);
    await Promise.all(reads.map((lock) => lock.release()));
  }, 30_000);

  it(`a queued waiter whose process was SIGKILLed holds the queue back at most ${QUEUE_PLACE_TTL_MS} ms`, async () => {
    const k = key('dead-waiter');
    const holder = await engines[0].acquire(k, { leaseMs: 60_000 });
    const child = spawn(
      process.execPath,
      [
        waiterScript,
        JSON.stringify({
          backend: { type: 'redis', url: server.url },
          key: k,
          keyPrefix,
          leaseMs: 5_000,
          waitMs: 60_000,
        }),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const lines = createInterface({ input: child.stdout });
    const events: string[] = [];
    lines.on('line', (line) => events.push((JSON.parse(line) as { event: string }).event));
    await waitUntil('the child process queued', async () => (await queueOf(k)).length === 1, 10_000, 5);
    const { lock: next } = await queueUp(1, k, 2);
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    const releasedAt = performance.now();
    await holder.release();
    const lock = await next;
    const waitedMs = performance.now() - releasedAt;
    console.log(
      `redis fair: next waiter got the lock ${Math.round(waitedMs)} ms after the release, behind a SIGKILLed waiter`,
    );
    expect(events).toEqual(['waiting']); // the child never held the lock
    // The dead place was refreshed at most QUEUE_REFRESH_MS before the kill, so it held the queue back a while...
    expect(waitedMs).toBeGreaterThan(QUEUE_PLACE_TTL_MS - 2 * QUEUE_REFRESH_MS);
    // ...and at most as long as a place lasts unrefreshed (plus a retry).
    expect(waitedMs).toBeLessThan(QUEUE_PLACE_TTL_MS + 300);
    expect(lock.fence!).toBeGreaterThan(holder.fence!);
    await lock.release();
  }, 30_000);
});
