import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine, type Lock } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/server-process.js';
import { asleepOn } from '../support/internal-seams.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('redis read/write locks', () => {
  let server: RedisServer;
  let admin: Redis;
  const backends: LockBackend[] = [];
  let a: LockEngine;
  let b: LockEngine;
  const keyPrefix = `rw:${randomUUID().slice(0, 8)}:`;
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
  const queueOf = (k: string) => admin.zrange(redisLockKeys(keyPrefix + k).queue, 0, -1);
  /** How many claims of backend `i` sleep, refused, until `k` is released. */
  const asleep = (i: number, k: string) => asleepOn(backends[i], keyPrefix + k);

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
    for (let i = 0; i < 2; i++) backends.push(await createLockBackend({ type: 'redis', url: server.url }));
    a = new LockEngine(backends[0], { keyPrefix, leaseMs: 5_000, waitMs: 10_000 });
    b = new LockEngine(backends[1], { keyPrefix, leaseMs: 5_000, waitMs: 10_000 });
  }, 30_000);

  afterAll(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    admin?.disconnect();
    await server?.stop();
  });

  it('does not starve a writer: readers re-acquiring in overlapping turns let a waiting writer in within one hold time', async () => {
    const k = key('starve');
    const holdMs = 300;
    const loops = 4;
    let readersIn = 0;
    let writerIn = false;
    let overlaps = 0;
    let stop = false;
    let writerQueuedAt = Infinity;
    let writerReleasedAt = Infinity;
    /** Reader acquisitions asked for after the writer queued, with the time each was granted. */
    const lateGrants: number[] = [];
    let warmedUp = 0;
    let warm: () => void = () => undefined;
    const allWarm = new Promise<void>((resolve) => (warm = resolve));
    const reader = async (i: number) => {
      await delay((i * holdMs) / loops); // staggered, so some reader always holds the key
      for (let round = 0; !stop; round++) {
        const askedAt = performance.now();
        await (i % 2 ? a : b).withLock(
          k,
          async () => {
            if (writerIn) overlaps++;
            if (askedAt > writerQueuedAt) lateGrants.push(performance.now());
            readersIn++;
            await delay(holdMs);
            readersIn--;
          },
          { mode: 'read' },
        );
        if (round === 0 && ++warmedUp === loops) warm();
      }
    };
    const readers = Array.from({ length: loops }, (_, i) => reader(i));
    try {
      await allWarm;
      // The writer asks while a reader holds the key (the loops' staggering alone does not promise it on a loaded machine).
      await waitUntil('a reader holds the key', () => readersIn > 0, 5_000, 1);

      const askedAt = performance.now();
      const writer = a.acquire(k, { mode: 'write' });
      await waitUntil(
        'the writer queued',
        async () => (await queueOf(k)).some((entry) => entry.startsWith('w')),
        5_000,
        2,
      );
      writerQueuedAt = performance.now();
      const lock = await writer;
      const waitedMs = performance.now() - askedAt;
      writerIn = true;
      expect(readersIn).toBe(0);
      await delay(50);
      writerIn = false;
      writerReleasedAt = performance.now();
      await lock.release();
      // Readers go on after the writer: let a few more rounds pass (then the loops stop, below).
      await waitUntil('readers back in', () => lateGrants.length >= loops, 5_000, 5);

      console.log(
        `redis read/write: writer waited ${Math.round(waitedMs)} ms behind ${loops} readers re-acquiring every ${holdMs} ms`,
      );
      expect(waitedMs).toBeLessThan(2 * holdMs);
      expect(overlaps).toBe(0);
      // Readers that asked after the writer queued were let in only after it left.
      expect(lateGrants.every((grantedAt) => grantedAt >= writerReleasedAt)).toBe(true);
    } finally {
      // Also when an expectation failed: no reader loop may outlive the test and fail in a later suite.
      stop = true;
      await Promise.allSettled(readers);
    }
  }, 30_000);

  it('lets readers of two app instances hold the key at once, each with a larger fence', async () => {
    const k = key('share');
    const first = await a.acquire(k, { mode: 'read', waitMs: 0 });
    const second = await b.acquire(k, { mode: 'read', waitMs: 0 });
    const third = await b.acquire(k, { mode: 'read', waitMs: 0 });
    expect(second.fence!).toBeGreaterThan(first.fence!);
    expect(third.fence!).toBeGreaterThan(second.fence!);
    expect(await admin.zcard(redisLockKeys(keyPrefix + k).readers)).toBe(3);
    for (const lock of [first, second, third]) expect(lock.signal.aborted).toBe(false);
    await Promise.all([first, second, third].map((lock) => lock.release()));
    expect(await admin.exists(redisLockKeys(keyPrefix + k).readers)).toBe(0);
  });

  it.each(['exclusive', 'write'] as const)(
    'a holder in mode %s excludes readers, writers and plain locks, and readers exclude it',
    async (mode) => {
      const k = key(mode);
      const held = await a.acquire(k, { mode });
      for (const other of ['read', 'write', 'exclusive'] as const)
        expect(await b.tryAcquire(k, { mode: other })).toBeNull();
      await held.release();
      const read = await b.acquire(k, { mode: 'read', waitMs: 0 });
      expect(await a.tryAcquire(k, { mode })).toBeNull();
      expect(await b.tryAcquire(k, { mode })).toBeNull();
      await read.release();
      const again = await b.acquire(k, { mode, waitMs: 0 });
      expect(again.fence!).toBeGreaterThan(read.fence!);
      await again.release();
    },
  );

  it('keeps readers and writers exclusive under load, while readers overlap', async () => {
    const k = key('load');
    let readers = 0;
    let writers = 0;
    let maxReaders = 0;
    let violations = 0;
    const fences: number[] = [];
    const task = (i: number) =>
      (i % 2 ? a : b).withLock(
        k,
        async (lock) => {
          const write = i % 5 === 0;
          fences.push(lock.fence!);
          if (write) writers++;
          else readers++;
          maxReaders = Math.max(maxReaders, readers);
          if (writers > 1 || (writers === 1 && readers > 0)) violations++;
          await delay(write ? 2 : 15);
          if (write) writers--;
          else readers--;
        },
        { mode: i % 5 === 0 ? 'write' : i % 3 === 0 ? 'exclusive' : 'read', waitMs: 20_000 },
      );
    await Promise.all(Array.from({ length: 40 }, (_, i) => task(i)));
    expect(violations).toBe(0);
    expect(maxReaders).toBeGreaterThan(1);
    expect(new Set(fences).size).toBe(40);
  }, 30_000);

  it("frees the key for a writer when a reader's lease lapses (a reader that stopped renewing)", async () => {
    const k = key('lapse');
    const leaseMs = 400;
    // A claim straight from the backend has no engine to renew it: like a reader whose process died.
    const claim = backends[0].claim({
      key: keyPrefix + k,
      owner: `dead-reader-${randomUUID()}`,
      leaseMs,
      mode: 'read',
      fair: false,
      permits: undefined,
      onLost: () => undefined,
    });
    const taken = await claim.tryAcquire();
    expect(taken.acquired).toBe(true);
    const startedAt = performance.now();
    const writer = await b.acquire(k, { mode: 'write', waitMs: 5_000 });
    const waitedMs = performance.now() - startedAt;
    expect(waitedMs).toBeGreaterThan(leaseMs - 100);
    expect(waitedMs).toBeLessThan(leaseMs + 1_000);
    expect(writer.fence!).toBeGreaterThan((taken as { fence: number }).fence);
    expect(await claim.renew(leaseMs)).toBe(false);
    expect(await claim.release()).toBe(false);
    await writer.release();
  });

  it('renews a reader while it holds, and wakes a waiting writer as soon as the last reader leaves', async () => {
    const k = key('renew');
    const first = await a.acquire(k, { mode: 'read', leaseMs: 600 });
    const second = await b.acquire(k, { mode: 'read', leaseMs: 20_000 });
    await delay(1_800); // three leases of the first reader: only renewals keep it
    expect(first.signal.aborted).toBe(false);
    const writer = a.acquire(k, { mode: 'write', waitMs: 10_000 });
    await waitUntil('the writer queued', () => asleep(0, k) === 1, 5_000, 2);
    expect((await queueOf(k))[0]).toMatch(/^w/);
    await first.release();
    expect(await admin.zcard(redisLockKeys(keyPrefix + k).readers)).toBe(1);
    const releasedAt = performance.now();
    await second.release();
    const lock = await writer;
    expect(performance.now() - releasedAt).toBeLessThan(500); // the release message, not the 20 s lease
    await lock.release();
  });

  it('lets the readers of one process queued behind a writer in together on its one release message', async () => {
    const k = key('cascade');
    const writer = await b.acquire(k, { mode: 'write', leaseMs: 60_000 }); // no fallback wake-up during the test
    const readers: Promise<Lock>[] = [];
    for (let i = 0; i < 5; i++) {
      readers.push(a.acquire(k, { mode: 'read', waitMs: 30_000 }));
      await waitUntil(`reader ${i} asleep`, () => asleep(0, k) === i + 1, 5_000, 2);
    }
    const releasedAt = performance.now();
    await writer.release();
    const held = await Promise.all(readers);
    expect(performance.now() - releasedAt).toBeLessThan(1_000);
    expect(await admin.zcard(redisLockKeys(keyPrefix + k).readers)).toBe(5);
    await Promise.all(held.map((lock) => lock.release()));
  });

  it('keeps the readers set alive as long as its longest lease, and no longer', async () => {
    const k = key('ttl');
    const readersKey = redisLockKeys(keyPrefix + k).readers;
    const short = await a.acquire(k, { mode: 'read', leaseMs: 2_000 });
    const long = await b.acquire(k, { mode: 'read', leaseMs: 8_000 });
    expect(await admin.pttl(readersKey)).toBeGreaterThan(6_000);
    await long.release();
    const pttl = await admin.pttl(readersKey);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(2_000);
    await short.release();
    expect(await admin.exists(readersKey)).toBe(0);
  });

  it('reads and writes awkward keys (braces, lone surrogates, protocol bytes) like any other', async () => {
    for (const k of ['orders:{42}:}', '{', 'a}b{c', '\ud800', 'x\r\n*3\r\n$3\r\nDEL', `long:${'z'.repeat(10_000)}`]) {
      const readers: Lock[] = [
        await a.acquire(k, { mode: 'read', waitMs: 0 }),
        await b.acquire(k, { mode: 'read', waitMs: 0 }),
      ];
      expect(await a.tryAcquire(k, { mode: 'write' })).toBeNull();
      const writer = b.acquire(k, { mode: 'write', waitMs: 5_000 });
      await waitUntil('the writer queued', () => asleep(1, k) === 1, 5_000, 2);
      expect(await a.tryAcquire(k, { mode: 'read' })).toBeNull(); // behind the queued writer
      await Promise.all(readers.map((lock) => lock.release()));
      const lock = await writer;
      expect(lock.fence!).toBeGreaterThan(readers[1].fence!);
      await lock.release();
    }
  }, 30_000);
});
