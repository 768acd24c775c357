import { InvalidLockArgumentError, LockLostError } from '../errors.js';
import type { LockEngine } from '../engine/lock-engine.js';
import type { LockEvent } from '../engine/lock-events.js';
import type { Lock } from '../engine/lock.js';
import { BusySpy } from './observed-backend.js';
import { keepingAlive, type ContractTestRunner } from './contract-runner.js';
import { expect } from './contract-expect.js';
import { useContractSuite } from './contract-suite.js';
import type { LockBackendContractTarget } from './contract-target.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Counting semaphores (`LockService.semaphore`, `permits`) on stores that declare them: at most
 * `permits` holders at once across instances, waiting on the store's notification, leases like
 * locks, and a key's semaphore kept apart from its lock. Runs with the same target as the backend contract.
 */
export function describeSemaphoreContract(
  name: string,
  target: LockBackendContractTarget,
  testRunner: ContractTestRunner,
): void {
  const runner = keepingAlive(testRunner);
  runner.describe(`${name} semaphore contract`, () => {
    const spy = new BusySpy();
    const suite = useContractSuite(runner, target, 'sem', { leaseMs: 5_000, waitMs: 5_000 }, (backend) =>
      spy.wrap(backend),
    );
    const { keyPrefix, key, newEngine } = suite;
    let a: LockEngine;
    let b: LockEngine;
    runner.beforeAll(async () => void ({ a, b } = suite));

    runner.it(
      'lets `permits` holders in at once across instances; the next waits and gets in when one releases',
      async () => {
        const k = key('limit');
        const held = [await a.semaphore(k, 3), await b.semaphore(k, 3), await a.semaphore(k, 3)];
        expect(await a.tryAcquire(k, { permits: 3 })).toBeNull();
        expect(await b.tryAcquire(k, { permits: 3 })).toBeNull();
        let next: Lock | undefined;
        const waiter = b.semaphore(k, 3, { waitMs: 15_000 }).then((lock) => (next = lock));
        await spy.whenBusy(3, keyPrefix + k);
        expect(next).toBeUndefined();
        const releasedAt = performance.now();
        await held[1].release();
        await waiter;
        // Woken by the store's notification, not by the 5 s lease or a long poll.
        expect(performance.now() - releasedAt).toBeLessThan(2_000);
        expect(await a.tryAcquire(k, { permits: 3 })).toBeNull();
        await Promise.all([held[0].release(), held[2].release(), next!.release()]);
        const again = await Promise.all([1, 2, 3].map((i) => (i % 2 ? a : b).semaphore(k, 3, { waitMs: 0 })));
        await Promise.all(again.map((lock) => lock.release()));
      },
      30_000,
    );

    runner.it(
      'never has more than `permits` holders under 16 concurrent callers on 2 instances, and reaches it',
      async () => {
        const k = key('concurrent');
        let inside = 0;
        let maxInside = 0;
        const work = (engine: LockEngine) =>
          engine.withLock(
            k,
            async () => {
              maxInside = Math.max(maxInside, ++inside);
              await delay(15);
              inside--;
            },
            { permits: 3, waitMs: 30_000 },
          );
        await Promise.all(Array.from({ length: 16 }, (_, i) => work(i % 2 ? a : b)));
        expect(maxInside).toBe(3);
      },
      40_000,
    );

    runner.it('tryAcquire answers null at once when all permits are held and leaves nothing behind', async () => {
      const k = key('try');
      const held = await Promise.all([a.semaphore(k, 2), b.semaphore(k, 2)]);
      const started = performance.now();
      expect(await b.tryAcquire(k, { permits: 2 })).toBeNull();
      expect(performance.now() - started).toBeLessThan(1_000);
      await held[0].release();
      const one = await a.semaphore(k, 2, { waitMs: 0 });
      await Promise.all([held[1].release(), one.release()]);
      const two = await Promise.all([a.semaphore(k, 2, { waitMs: 0 }), b.semaphore(k, 2, { waitMs: 0 })]);
      await Promise.all(two.map((lock) => lock.release()));
    });

    runner.it('renews permits while their holders run, far past the lease', async () => {
      const k = key('renew');
      const engine = await newEngine({ leaseMs: 300 });
      const lock = await engine.semaphore(k, 1);
      const firstExpiry = lock.expiresAt;
      await delay(1_000);
      expect(lock.signal.aborted).toBe(false);
      expect(await b.tryAcquire(k, { permits: 1 })).toBeNull();
      expect(lock.expiresAt).toBeGreaterThan(firstExpiry);
      await lock.release();
    });

    runner.it(
      "frees permits whose leases lapsed in the store, and aborts their holders' signals with LockLostError",
      async () => {
        if (!target.expireSemaphore) return;
        const k = key('lost');
        const engine = await newEngine({ leaseMs: 300 });
        const held = [await engine.semaphore(k, 2), await engine.semaphore(k, 2)];
        expect(await b.tryAcquire(k, { permits: 2 })).toBeNull();
        const lost = new Promise<LockEvent[]>((resolve) => {
          const events: LockEvent[] = [];
          const subscription = engine.events.subscribe((event) => {
            if (event.type === 'lost' && events.push(event) === 2) {
              subscription.unsubscribe();
              resolve(events);
            }
          });
        });
        await target.expireSemaphore(keyPrefix + k);
        const fresh = await Promise.all([b.semaphore(k, 2, { waitMs: 0 }), a.semaphore(k, 2, { waitMs: 0 })]);
        expect((await lost).map((event) => event.key)).toEqual([k, k]);
        for (const lock of held) {
          expect(lock.signal.reason).toBeInstanceOf(LockLostError);
          await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
        }
        // The stale holders' releases did not free the new holders' permits.
        expect(await b.tryAcquire(k, { permits: 2 })).toBeNull();
        expect(fresh.every((lock) => !lock.signal.aborted)).toBe(true);
        await Promise.all(fresh.map((lock) => lock.release()));
      },
    );

    runner.it("keeps a key's semaphore apart from its lock", async () => {
      const k = key('apart');
      const lock = await a.acquire(k);
      const permit = await b.semaphore(k, 1, { waitMs: 0 });
      expect(await b.tryAcquire(k)).toBeNull();
      expect(await a.tryAcquire(k, { permits: 1 })).toBeNull();
      if (target.expireLock) await target.expireLock(keyPrefix + k);
      await lock.release().catch(() => undefined);
      expect(permit.signal.aborted).toBe(false);
      expect(await a.tryAcquire(k, { permits: 1 })).toBeNull();
      const relock = await a.acquire(k, { waitMs: 0 });
      await Promise.all([relock.release(), permit.release()]);
    });

    runner.it(
      'is re-entrant within one call chain: the inner call shares the permit (and its fence) and takes no other',
      async () => {
        const k = key('reentrant');
        const other = await b.semaphore(k, 2);
        await a.withLock(
          k,
          async (outer) => {
            const inner = await a.semaphore(k, 2, { waitMs: 0 });
            expect(inner.fence).toBe(outer.fence);
            await inner.release();
            expect(outer.signal.aborted).toBe(false);
            expect(await b.tryAcquire(k, { permits: 2 })).toBeNull();
            // The lock of the same key is another thing: this chain does not hold it.
            const lock = await a.acquire(k, { waitMs: 0 });
            expect(lock.fence).not.toBe(outer.fence);
            await lock.release();
          },
          { permits: 2 },
        );
        const after = await b.semaphore(k, 2, { waitMs: 0 });
        await Promise.all([after.release(), other.release()]);
      },
    );

    if (target.fences) {
      runner.it('gives fences that increase with every acquisition of a permit', async () => {
        const k = key('fence');
        const fences: number[] = [];
        const first = await a.semaphore(k, 2);
        for (let i = 0; i < 4; i++) {
          const lock = await (i % 2 ? a : b).semaphore(k, 2, { waitMs: 0 });
          fences.push(lock.fence!);
          await lock.release();
        }
        await first.release();
        expect(first.fence).toBeLessThan(fences[0]);
        for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
      });
    }

    runner.describe('bad permits', () => {
      const bad: [string, unknown][] = [
        ['0', 0],
        ['-1', -1],
        ['1.5', 1.5],
        ['NaN', Number.NaN],
        ["'3'", '3'],
        ['100001', 100_001],
        ['Infinity', Infinity],
      ];
      for (const [what, permits] of bad) {
        runner.it(
          `${what} → InvalidLockArgumentError from semaphore, acquire and withLock; nothing left held`,
          async () => {
            const k = key('bad');
            await expect(a.semaphore(k, permits as number)).rejects.toBeInstanceOf(InvalidLockArgumentError);
            await expect(a.tryAcquire(k, { permits: permits as number })).rejects.toBeInstanceOf(
              InvalidLockArgumentError,
            );
            await expect(a.withLock(k, () => undefined, { permits: permits as number })).rejects.toBeInstanceOf(
              InvalidLockArgumentError,
            );
            const permit = await b.semaphore(k, 1, { waitMs: 0 });
            const lock = await b.acquire(k, { waitMs: 0 });
            await Promise.all([permit.release(), lock.release()]);
          },
        );
      }

      runner.it('a mode or fair: true with permits → InvalidLockArgumentError', async () => {
        const k = key('bad-mode');
        await expect(a.semaphore(k, 2, { mode: 'read' })).rejects.toBeInstanceOf(InvalidLockArgumentError);
        await expect(a.semaphore(k, 2, { fair: true })).rejects.toBeInstanceOf(InvalidLockArgumentError);
        await (await b.semaphore(k, 1, { waitMs: 0 })).release();
      });
    });

    runner.it("close() releases the engine's permits for other instances", async () => {
      const k = key('close');
      const engine = await newEngine();
      const held = await engine.semaphore(k, 1);
      await engine.close();
      expect(held.signal.aborted).toBe(true);
      await (await b.semaphore(k, 1, { waitMs: 0 })).release();
    });
  });
}
