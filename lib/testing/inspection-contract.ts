import { InvalidLockArgumentError, LockLostError, LockTimeoutError } from '../errors.js';
import type { LockEngine } from '../engine/lock-engine.js';
import type { LockInfo } from '../engine/lock-info.js';
import { nextEvent } from './next-event.js';
import { keepingAlive, type ContractTestRunner } from './contract-runner.js';
import { expect } from './contract-expect.js';
import { useContractSuite } from './contract-suite.js';
import type { LockBackendContractTarget } from './contract-target.js';

/** What one store can tell about its locks (see docs/operations.md); the contract checks what it claims. */
export interface InspectionAbilities {
  /** Remaining lease per holder (not ZooKeeper, whose liveness is a session). */
  readonly leases: boolean;
  /** The most a remaining lease may be: the suite's lease (6 s) unless the store's lease is its own (etcd: the backend's lease TTL). */
  readonly leaseMaxMs?: number;
  /** The holder's own fence (Redis reports the key's latest fence, which is the exclusive holder's). */
  readonly holderFence: boolean;
  /** How many claims wait and who, in queue order (stores with a queue; on Redis, fair claims). Otherwise `waiters` is absent. */
  readonly waiters: boolean;
  /** Counting semaphores, and whether the store keeps the number of permits. */
  readonly semaphores: false | { readonly permits: boolean };
}

/** Polls `inspect` until `done` holds (bounded), for states the store reaches on its own (a waiter queueing). */
async function inspectUntil(engine: LockEngine, key: string, done: (info: LockInfo) => boolean): Promise<LockInfo> {
  let info = await engine.inspect(key);
  for (let round = 0; round < 200 && !done(info); round++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    info = await engine.inspect(key);
  }
  return info;
}

/**
 * `LockService.inspect`, `list` and `forceRelease` on one store, with real servers: holder identity
 * (instance and label) read back from another instance, pagination, and a force release that hands
 * the next holder a larger fence and makes the evicted holder's signal abort.
 */
export function describeInspectionContract(
  name: string,
  target: LockBackendContractTarget,
  testRunner: ContractTestRunner,
  can: InspectionAbilities,
): void {
  const runner = keepingAlive(testRunner);
  runner.describe(`${name} inspection contract`, () => {
    const suite = useContractSuite(runner, target, 'inspect', { leaseMs: 6_000, waitMs: 5_000 });
    const { key } = suite;
    let a: LockEngine;
    let b: LockEngine;
    let c: LockEngine;
    runner.beforeAll(async () => {
      a = await suite.newEngine({ instance: 'worker-a' });
      b = await suite.newEngine({ instance: 'worker-b' });
      c = await suite.newEngine({ instance: 'worker-c' });
    });

    runner.it('reports a free key as not held', async () => {
      const info = await b.inspect(key('free'));
      expect(info).toMatchObject({ held: false, holders: [] });
    });

    runner.it("shows the holder's instance, label, fence and remaining lease to another instance", async () => {
      const k = key('held');
      const lock = await a.acquire(k, { label: 'order 42' });
      const info = await b.inspect(k);
      expect(info).toMatchObject({ key: k, held: true, mode: 'exclusive' });
      expect(info.holders).toHaveLength(1);
      const [holder] = info.holders;
      expect(holder).toMatchObject({ instance: 'worker-a', label: 'order 42' });
      if (can.holderFence && target.fences) expect(holder.fence).toBe(lock.fence);
      if (can.leases) {
        expect(holder.expiresInMs).toBeGreaterThan(0);
        expect(holder.expiresInMs).toBeLessThanOrEqual(can.leaseMaxMs ?? 6_000);
        const listed = (await b.list({ prefix: k })).locks;
        expect(listed.map((info) => info.holders[0].expiresInMs! > 0)).toEqual([true]);
      } else {
        expect(holder).not.toHaveProperty('expiresInMs');
      }
      await lock.release();
      expect(await b.inspect(k)).toMatchObject({ held: false, holders: [] });
    });

    runner.it(
      'tells since when a lock is held: acquiredAt from the acquisition, unchanged by extend, renewals and re-entrant calls',
      async () => {
        const k = key('age');
        const before = Date.now();
        const acquiredAt = await a.withLock(k, async (lock) => {
          const after = Date.now();
          const [holder] = (await b.inspect(k)).holders;
          expect(holder.acquiredAt).toBeGreaterThanOrEqual(before);
          expect(holder.acquiredAt).toBeLessThanOrEqual(after);
          await lock.extend();
          expect((await b.inspect(k)).holders.map((seen) => seen.acquiredAt)).toEqual([holder.acquiredAt]);
          // The watchdog's own renewal (every leaseMs / 3 = 2 s).
          expect(await nextEvent(a, 'extended')).toMatchObject({ key: k });
          await a.withLock(k, async (inner) => {
            expect(inner.fence).toBe(lock.fence);
            expect((await b.inspect(k)).holders.map((seen) => seen.acquiredAt)).toEqual([holder.acquiredAt]);
          });
          expect((await b.inspect(k)).holders.map((seen) => seen.acquiredAt)).toEqual([holder.acquiredAt]);
          return holder.acquiredAt!;
        });
        const next = await b.acquire(k);
        const [holder] = (await a.inspect(k)).holders;
        expect(holder.instance).toBe('worker-b');
        expect(holder.acquiredAt).toBeGreaterThanOrEqual(acquiredAt);
        await next.release();
      },
    );

    runner.it('keeps a hostile label as plain text, cut to a bounded length', async () => {
      const k = key('label');
      const hostile = '<script>alert(1)</script> | %41 \u0000\u001b[31m ✓ 𝄞';
      const lock = await a.acquire(k, { label: hostile });
      expect((await b.inspect(k)).holders[0].label).toBe(hostile);
      await lock.release();
      const long = await a.acquire(k, { label: 'é'.repeat(10_000) });
      const label = (await b.inspect(k)).holders[0].label!;
      expect(label.length).toBeGreaterThan(10);
      expect(label.length).toBeLessThanOrEqual(96);
      expect(label).toMatch(/^é+$/);
      await long.release();
    });

    if (target.readWrite) {
      runner.it('shows readers sharing a key', async () => {
        const k = key('readers');
        const readers = [
          await a.acquire(k, { mode: 'read', label: 'r1' }),
          await b.acquire(k, { mode: 'read', label: 'r2' }),
        ];
        const info = await a.inspect(k);
        expect(info.mode).toBe('read');
        expect(info.holders.map((holder) => holder.label).sort()).toEqual(['r1', 'r2']);
        await Promise.all(readers.map((lock) => lock.release()));
      });
    }

    if (can.waiters) {
      runner.it('counts the claims waiting for a key', async () => {
        const k = key('waiting');
        const lock = await a.acquire(k);
        // fair: a queued claim (Redis queues fair and read/write claims; plain waiters only sleep on pub/sub).
        const waiter = b.acquire(k, { waitMs: 20_000, fair: true });
        waiter.catch(() => undefined);
        const info = await inspectUntil(a, k, (seen) => seen.waiting === 1);
        expect(info.waiting).toBe(1);
        await lock.release();
        await (await waiter).release();
      });

      runner.it(
        'lists who waits, in queue order, with instance, label and since when; the first served keeps that time as acquiredAt',
        async () => {
          const k = key('queue');
          const lock = await a.acquire(k);
          const before = Date.now();
          const first = b.acquire(k, { waitMs: 20_000, fair: true, label: 'first in line' });
          first.catch(() => undefined);
          await inspectUntil(a, k, (seen) => seen.waiting === 1);
          const afterFirst = Date.now();
          const second = c.acquire(k, { waitMs: 20_000, fair: true, label: 'second' });
          second.catch(() => undefined);
          const info = await inspectUntil(a, k, (seen) => seen.waiting === 2);
          expect(info.waiters!.map(({ instance, label }) => ({ instance, label }))).toEqual([
            { instance: 'worker-b', label: 'first in line' },
            { instance: 'worker-c', label: 'second' },
          ]);
          expect((await b.list({ prefix: k })).locks.map((listed) => listed.waiters)).toEqual([info.waiters]);
          const [since1, since2] = info.waiters!.map((waiter) => waiter.since!);
          expect(since1).toBeGreaterThanOrEqual(before);
          expect(since1).toBeLessThanOrEqual(afterFirst);
          expect(since2).toBeGreaterThanOrEqual(afterFirst);
          expect(since2).toBeLessThanOrEqual(Date.now());
          await lock.release();
          const firstLock = await first;
          const served = await c.inspect(k);
          expect(served.holders).toMatchObject([{ instance: 'worker-b', label: 'first in line', acquiredAt: since1 }]);
          expect(served.waiters!.map((waiter) => waiter.label)).toEqual(['second']);
          await firstLock.release();
          await (await second).release();
          expect((await a.inspect(k)).waiters).toEqual([]);
        },
      );

      runner.it('leaves no claim waiting once tryAcquire has returned null or acquire has timed out', async () => {
        const k = key('gave-up');
        const lock = await a.acquire(k);
        expect(await b.tryAcquire(k, { fair: true })).toBeNull();
        expect((await a.inspect(k)).waiting).toBe(0);
        await expect(b.acquire(k, { waitMs: 100, fair: true })).rejects.toBeInstanceOf(LockTimeoutError);
        expect((await a.inspect(k)).waiting).toBe(0);
        await lock.release();
      });
    }

    if (!can.waiters) {
      runner.it('does not pretend to know who waits: waiters is absent', async () => {
        const k = key('no-queue');
        const lock = await a.acquire(k);
        const waiter = b.acquire(k, { waitMs: 20_000, label: 'waiting' });
        waiter.catch(() => undefined);
        const info = await b.inspect(k);
        expect(info.held).toBe(true);
        expect(info).not.toHaveProperty('waiters');
        expect((await b.list({ prefix: k })).locks.every((listed) => !('waiters' in listed))).toBe(true);
        await lock.release();
        await (await waiter).release();
      });
    }

    if (can.semaphores) {
      const { permits } = can.semaphores;
      runner.it('shows the permits of a semaphore and who holds them', async () => {
        const k = key('sem');
        const held = [await a.semaphore(k, 3, { label: 'p1' }), await b.semaphore(k, 3, { label: 'p2' })];
        const info = await a.inspect(k);
        expect(info.held).toBe(true);
        expect(info.semaphore).toEqual(permits ? { used: 2, permits: 3 } : { used: 2 });
        expect(
          info.holders
            .filter((holder) => holder.permit)
            .map((holder) => holder.label)
            .sort(),
        ).toEqual(['p1', 'p2']);
        expect(await b.forceRelease(k)).toBe(true);
        expect((await a.inspect(k)).held).toBe(false);
        await Promise.allSettled(held.map((lock) => lock.release()));
      });
    }

    runner.it('lists the held keys under a prefix, page by page, each once', async () => {
      const base = key('list');
      const keys = [`${base}:1`, `${base}:2`, `${base}:3`];
      const locks = await Promise.all(keys.map((k, i) => (i % 2 ? a : b).acquire(k, { label: `job ${i}` })));
      const other = await a.acquire(key('elsewhere'));
      for (const k of keys) await target.settled?.(suite.keyPrefix + k);
      const seen: LockInfo[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await b.list({ prefix: `${base}:`, limit: 2, cursor });
        expect(page.locks.length).toBeLessThanOrEqual(2);
        seen.push(...page.locks);
        cursor = page.cursor;
      } while (cursor !== undefined && ++pages < 500);
      expect(seen.map((info) => info.key).sort()).toEqual(keys);
      expect(seen.every((info) => info.held && info.holders[0].label?.startsWith('job '))).toBe(true);
      await Promise.all([...locks, other].map((lock) => lock.release()));
      expect((await b.list({ prefix: `${base}:` })).locks).toEqual([]);
    });

    runner.it(
      'lists every key held throughout the listing, while the keys already listed are released between pages',
      async () => {
        const base = key('churn');
        const keys = [1, 2, 3, 4].map((i) => `${base}:${i}`);
        const locks = new Map(await Promise.all(keys.map(async (k) => [k, await a.acquire(k)] as const)));
        for (const k of keys) await target.settled?.(suite.keyPrefix + k);
        const seen = new Set<string>();
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await b.list({ prefix: `${base}:`, limit: 1, cursor });
          for (const info of page.locks) {
            seen.add(info.key);
            await locks.get(info.key)?.release();
            locks.delete(info.key);
          }
          cursor = page.cursor;
        } while (cursor !== undefined && ++pages < 500);
        expect([...seen].sort()).toEqual(keys);
        expect(locks.size).toBe(0);
      },
    );

    runner.it('refuses bad list options with InvalidLockArgumentError', async () => {
      await expect(a.list({ limit: 0 })).rejects.toThrow('limit must be');
      await expect(a.list({ prefix: 7 as unknown as string })).rejects.toThrow('prefix must be');
      // A cursor this store never handed out (well-formed base64url included) is refused, not read as a place to start.
      await expect(a.list({ prefix: `${key('cursor')}:`, cursor: 'garbage' })).rejects.toThrow(
        InvalidLockArgumentError,
      );
    });

    runner.it(
      'force-releases a lock: the evicted holder learns it, the next fence is larger, an event says who and why',
      async () => {
        const k = key('force');
        const evicted = await a.acquire(k, { label: 'stuck job' });
        const lost = new Promise<unknown>((resolve) =>
          evicted.signal.addEventListener('abort', () => resolve(evicted.signal.reason), { once: true }),
        );
        const event = nextEvent(b, 'force-released');
        expect(await b.forceRelease(k, { reason: 'job hung', actor: 'alice' })).toBe(true);
        const evictedHolder = {
          instance: 'worker-a',
          label: 'stuck job',
          ...(target.fences ? { fence: evicted.fence } : {}),
        };
        expect(await event).toMatchObject({
          key: k,
          by: 'worker-b',
          reason: 'job hung',
          actor: 'alice',
          evicted: [evictedHolder],
        });
        const next = await b.tryAcquire(k);
        expect(next).not.toBeNull();
        if (target.fences) expect(next!.fence!).toBeGreaterThan(evicted.fence!);
        // At its next renewal at the latest (lease 6 s: renewed every 2 s).
        expect(await lost).toBeInstanceOf(LockLostError);
        await next!.release();
        expect(await b.forceRelease(k)).toBe(false);
        await evicted.release().catch(() => undefined);
      },
    );
  });
}
