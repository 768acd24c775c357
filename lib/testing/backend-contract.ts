import {
  InvalidLockArgumentError,
  LockBackendError,
  LockLostError,
  LockShuttingDownError,
  LockTimeoutError,
} from '../errors.js';
import type { LockBackend } from '../engine/lock-backend.js';
import { LockEngine } from '../engine/lock-engine.js';
import type { LockEvent } from '../engine/lock-events.js';
import { isMultiLock } from '../engine/lock.js';
import { expect } from './contract-expect.js';
import { keepingAlive, type ContractTestRunner } from './contract-runner.js';
import { useContractSuite } from './contract-suite.js';
import type { LockBackendContractTarget } from './contract-target.js';
import { runMultiKeyLoad } from './multi-key-load.js';
import { nextEvent } from './next-event.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Blocks the event loop, as a long GC pause or a CPU-bound handler would. */
function blockEventLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/**
 * The core of the contract (see `describeLockBackendContract`): exclusion, waiting and hand-off,
 * ownership, re-entrancy, leases and loss, fences, read/write modes, multi-key locks, bad input,
 * events and shutdown.
 */
export function describeCoreContract(
  name: string,
  target: LockBackendContractTarget,
  testRunner: ContractTestRunner,
): void {
  const runner = keepingAlive(testRunner);
  const crashFreeMs = (leaseMs: number) => target.crashFreeMs?.(leaseMs) ?? leaseMs;
  runner.describe(`${name} backend contract`, () => {
    const suite = useContractSuite(runner, target, 'contract', { leaseMs: 5_000, waitMs: 5_000 });
    const { keyPrefix, key, newEngine } = suite;
    let a: LockEngine;
    let b: LockEngine;
    runner.beforeAll(async () => void ({ a, b } = suite));

    runner.describe('exclusion', () => {
      runner.it('lets one holder in at a time, across instances', async () => {
        const k = key('exclusion');
        const first = await a.acquire(k);
        expect(await b.tryAcquire(k)).toBeNull();
        expect(await a.tryAcquire(k)).toBeNull(); // another holder in the same process is still another holder
        await first.release();
        const second = await b.tryAcquire(k);
        expect(second).not.toBeNull();
        await second!.release();
      });

      runner.it(
        'loses no update of a non-atomic counter under 24 concurrent holders on 2 instances',
        async () => {
          const k = key('counter');
          let counter = 0;
          let inside = 0;
          let maxInside = 0;
          const increment = (engine: LockEngine) =>
            engine.withLock(
              k,
              async () => {
                maxInside = Math.max(maxInside, ++inside);
                const read = counter;
                await tick();
                counter = read + 1;
                inside--;
              },
              { waitMs: 20_000 },
            );
          await Promise.all(Array.from({ length: 24 }, (_, i) => increment(i % 2 ? a : b)));
          expect(counter).toBe(24);
          expect(maxInside).toBe(1);
        },
        30_000,
      );

      runner.it('keeps different keys independent', async () => {
        const one = await a.acquire(key('independent-1'));
        const two = await b.acquire(key('independent-2'), { waitMs: 0 });
        await Promise.all([one.release(), two.release()]);
      });
    });

    runner.describe('waiting', () => {
      runner.it('times out with LockTimeoutError (not LockBackendError) after waitMs', async () => {
        const k = key('timeout');
        const held = await a.acquire(k, { leaseMs: 10_000 });
        const started = performance.now();
        const error = await b.acquire(k, { waitMs: 150 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockTimeoutError);
        expect(performance.now() - started).toBeGreaterThanOrEqual(140);
        expect((error as LockTimeoutError).key).toBe(k);
        await held.release();
      });

      runner.it('hands the lock to a waiter when the holder releases, well before the lease would lapse', async () => {
        const k = key('handoff');
        const held = await a.acquire(k, { leaseMs: 20_000 });
        const waiter = b.acquire(k, { waitMs: 15_000 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        const releasedAt = performance.now();
        await held.release();
        const next = await waiter;
        // Woken by the store's notification, not by the 20 s lease or a long poll.
        expect(performance.now() - releasedAt).toBeLessThan(2_000);
        await next.release();
      });

      runner.it('tryAcquire answers null at once when busy and leaves nothing behind', async () => {
        const k = key('try');
        const held = await a.acquire(k);
        expect(await b.tryAcquire(k)).toBeNull();
        await held.release();
        const again = await b.acquire(k, { waitMs: 0 });
        await again.release();
      });

      runner.it('stops waiting when the caller aborts', async () => {
        const k = key('abort');
        const held = await a.acquire(k);
        const controller = new AbortController();
        const waiting = b.acquire(k, { waitMs: 10_000, signal: controller.signal });
        setTimeout(() => controller.abort(new Error('caller gave up')), 50);
        await expect(waiting).rejects.toThrow('caller gave up');
        await held.release();
        void (await b.acquire(k, { waitMs: 0 })).release();
      });
    });

    runner.describe('ownership', () => {
      runner.it(
        "release and extend are the owner's only: a lapsed holder cannot free the next holder's lock",
        async () => {
          if (!target.expireLock) return;
          const k = key('owner');
          const stale = await a.acquire(k, { leaseMs: 10_000 });
          await target.expireLock(keyPrefix + k);
          const fresh = await b.acquire(k, { waitMs: 10_000 });
          await expect(stale.release()).rejects.toBeInstanceOf(LockLostError);
          await expect(stale.extend()).rejects.toBeInstanceOf(LockLostError);
          expect(await a.tryAcquire(k)).toBeNull(); // fresh still holds it
          expect(fresh.signal.aborted).toBe(false);
          await fresh.release();
        },
      );

      runner.it('release twice is a no-op; extend after release is refused', async () => {
        const lock = await a.acquire(key('twice'));
        await lock.release();
        await expect(lock.release()).resolves.toBeUndefined();
        await expect(lock.extend()).rejects.toBeInstanceOf(LockLostError);
        expect(lock.signal.aborted).toBe(true);
      });

      runner.it('uses a different owner for every acquisition, even in one call chain of one process', async () => {
        const k = key('owners');
        const owners: string[] = [];
        const backend = await target.createBackend();
        const spy: LockBackend = {
          name: backend.name,
          capabilities: backend.capabilities,
          close: () => backend.close(),
          claim: (request) => (owners.push(request.owner), backend.claim(request)),
        };
        const engine = await newEngine({}, spy);
        await (await engine.acquire(k)).release();
        await (await engine.acquire(k)).release();
        expect(new Set(owners).size).toBe(2);
      });
    });

    runner.describe('re-entrancy', () => {
      runner.it(
        'gives a call chain that holds the key the same lock at once, freed by the outermost release',
        async () => {
          const k = key('reentrant');
          await a.withLock(k, async (outer) => {
            const inner = await a.acquire(k, { waitMs: 0 });
            expect(inner.fence).toBe(outer.fence);
            await a.withLock(k, async (innermost) => expect(innermost.fence).toBe(outer.fence), { waitMs: 0 });
            await inner.release();
            expect(outer.signal.aborted).toBe(false);
            expect(await b.tryAcquire(k)).toBeNull();
            expect(a.current()).toBe(outer);
          });
          const after = await b.acquire(k, { waitMs: 0 });
          await after.release();
        },
      );

      runner.it('treats two concurrent call chains of one process as two holders', async () => {
        const k = key('chains');
        let inside = 0;
        let maxInside = 0;
        const work = () =>
          a.withLock(k, async () => {
            maxInside = Math.max(maxInside, ++inside);
            await new Promise((resolve) => setTimeout(resolve, 20));
            inside--;
          });
        await Promise.all([work(), work(), work()]);
        expect(maxInside).toBe(1);
      });
    });

    runner.describe('leases', () => {
      runner.it('renews the lease while the holder runs, far past the lease length', async () => {
        const k = key('renew');
        // Renewed every 500 ms: a store statement may take several hundred ms on a loaded machine without
        // the lease lapsing (at 750 ms, the PostgreSQL run lapsed once while the footprint suites loaded both cores).
        const engine = await newEngine({ leaseMs: 1_500 });
        const extended: LockEvent[] = [];
        const subscription = engine.events.subscribe((event) => event.type === 'extended' && extended.push(event));
        const lock = await engine.acquire(k);
        const firstExpiry = lock.expiresAt;
        await new Promise((resolve) => setTimeout(resolve, 4_500));
        expect(lock.signal.aborted).toBe(false);
        expect(await b.tryAcquire(k)).toBeNull();
        expect(extended.length).toBeGreaterThanOrEqual(2);
        expect(lock.expiresAt).toBeGreaterThan(firstExpiry);
        subscription.unsubscribe();
        await lock.release();
      });

      runner.it('aborts the signal with LockLostError when the store no longer has the lock', async () => {
        if (!target.expireLock) return;
        const k = key('lost');
        const engine = await newEngine({ leaseMs: 300 });
        const lock = await engine.acquire(k);
        const lost = nextEvent(engine, 'lost');
        await target.expireLock(keyPrefix + k);
        const event = await lost;
        expect(lock.signal.aborted).toBe(true);
        expect(lock.signal.reason).toBeInstanceOf(LockLostError);
        expect(event).toMatchObject({ type: 'lost', key: k });
        await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
      });

      runner.it(
        'aborts the signal when the event loop was blocked past the lease, before anyone trusts it',
        async () => {
          const k = key('blocked');
          const engine = await newEngine({ leaseMs: 200 });
          const lock = await engine.acquire(k);
          blockEventLoop(400);
          // The local lease clock catches it even before a timer gets to run.
          await expect(lock.extend()).rejects.toBeInstanceOf(LockLostError);
          expect(lock.signal.reason).toBeInstanceOf(LockLostError);
        },
      );

      runner.it('extend() pushes expiresAt forward', async () => {
        const lock = await a.acquire(key('extend'), { leaseMs: 1_000 });
        const before = lock.expiresAt;
        await new Promise((resolve) => setTimeout(resolve, 20));
        await lock.extend(5_000);
        expect(lock.expiresAt).toBeGreaterThan(before + 3_000);
        await lock.release();
      });
    });

    runner.describe('fences', () => {
      runner.it('are strictly increasing over successive holders, across instances', async () => {
        const k = key('fence');
        const fences: (number | undefined)[] = [];
        for (let i = 0; i < 6; i++) {
          const lock = await (i % 2 ? a : b).acquire(k);
          fences.push(lock.fence);
          await lock.release();
        }
        if (!target.fences) {
          expect(fences.every((fence) => fence === undefined)).toBe(true);
          return;
        }
        for (let i = 1; i < fences.length; i++) expect(fences[i]!).toBeGreaterThan(fences[i - 1]!);
      });
    });

    if (target.startHolderProcess) {
      runner.describe('processes', () => {
        runner.it(
          'frees the lock of a holder process that was SIGKILLed, and the next holder has a larger fence',
          async () => {
            const k = key('crash');
            const leaseMs = 1_000;
            const holder = await target.startHolderProcess!({ key: k, keyPrefix, leaseMs });
            expect(await a.tryAcquire(k)).toBeNull();
            const killedAt = performance.now();
            await holder.kill();
            const next = await a.acquire(k, { waitMs: crashFreeMs(leaseMs) + 5_000 });
            expect(performance.now() - killedAt).toBeLessThan(crashFreeMs(leaseMs) + 2_000);
            if (target.fences) expect(next.fence!).toBeGreaterThan(holder.fence!);
            await next.release();
          },
          30_000,
        );
      });
    }

    if (target.readWrite) {
      runner.describe('read/write modes', () => {
        runner.it('lets readers share the key and keeps writers out', async () => {
          const k = key('rw');
          const r1 = await a.acquire(k, { mode: 'read' });
          const r2 = await b.acquire(k, { mode: 'read', waitMs: 0 });
          expect(await b.tryAcquire(k, { mode: 'write' })).toBeNull();
          expect(await a.tryAcquire(k)).toBeNull();
          await Promise.all([r1.release(), r2.release()]);
          const w = await b.acquire(k, { mode: 'write', waitMs: 0 });
          expect(await a.tryAcquire(k, { mode: 'read' })).toBeNull();
          await w.release();
        });
      });
    }

    runner.describe('multi-key locks', () => {
      runner.it('take all keys or none: one busy key leaves the others free', async () => {
        const [k1, k2] = [key('all-1'), key('all-2')];
        const busy = await b.acquire(k2);
        expect(await a.tryAcquire([k1, k2])).toBeNull();
        const free = await b.tryAcquire(k1); // not left held by the failed attempt
        expect(free).not.toBeNull();
        await Promise.all([free!.release(), busy.release()]);
        const both = await a.acquire([k2, k1], { waitMs: 0 });
        expect(isMultiLock(both) && both.keys.length === 2 && both.fences).toBeTruthy();
        expect(await b.tryAcquire(k1)).toBeNull();
        await both.release();
        expect(await b.tryAcquire([k1, k2])).not.toBeNull();
      });

      runner.it(
        'never deadlock on key lists given in opposite orders, and lose no update',
        async () => {
          const keys = [key('mk-0'), key('mk-1'), key('mk-2'), key('mk-3')];
          const result = await runMultiKeyLoad([a, b], {
            workersPerEngine: 3,
            iterations: 10,
            keys,
            seed: 7,
            gap: async () => void (await tick()),
            boundMs: 20_000,
          });
          // Holds in fence order read 0, 1, 2, ... (no overlap), where the store gives fences.
          const misordered = target.fences ? result.misorderedKeys : [];
          expect({
            finished: result.finished,
            errors: result.errors,
            lostUpdates: result.lostUpdates,
            misordered,
          }).toEqual({ finished: true, errors: [], lostUpdates: 0, misordered: [] });
          expect(result.actual).toEqual(result.expected);
        },
        30_000,
      );
    });

    runner.describe('bad input', () => {
      const bad: [string, (engine: LockEngine) => Promise<unknown>][] = [
        ['empty key', (e) => e.acquire('')],
        ['non-string key', (e) => e.acquire(42 as unknown as string)],
        ['undefined key', (e) => e.tryAcquire(undefined as unknown as string)],
        ['zero lease', (e) => e.acquire('x', { leaseMs: 0 })],
        ['negative lease', (e) => e.acquire('x', { leaseMs: -5 })],
        ['NaN lease', (e) => e.acquire('x', { leaseMs: Number.NaN })],
        ['infinite lease', (e) => e.acquire('x', { leaseMs: Number.POSITIVE_INFINITY })],
        ['negative wait', (e) => e.acquire('x', { waitMs: -1 })],
        ['NaN wait', (e) => e.acquire('x', { waitMs: Number.NaN })],
        ['unknown mode', (e) => e.acquire('x', { mode: 'shared' as never })],
        ['options not an object', (e) => e.acquire('x', 'fast' as never)],
        ['withLock without a function', (e) => e.withLock('x', undefined as never)],
      ];
      for (const [what, call] of bad) {
        runner.it(`${what} → InvalidLockArgumentError, nothing left locked`, async () => {
          await expect(call(a)).rejects.toBeInstanceOf(InvalidLockArgumentError);
          const lock = await b.acquire('x', { waitMs: 0 });
          await lock.release();
        });
      }

      runner.it('extend with a bad lease is refused and the lock stays held', async () => {
        const lock = await a.acquire(key('bad-extend'));
        await expect(lock.extend(-1)).rejects.toBeInstanceOf(InvalidLockArgumentError);
        expect(lock.signal.aborted).toBe(false);
        await lock.release();
      });
    });

    if (target.createUnreachableBackend) {
      runner.it(
        'reports an unreachable store as LockBackendError, not as busy',
        async () => {
          const engine = new LockEngine(await target.createUnreachableBackend!(), { keyPrefix, waitMs: 2_000 });
          const started = performance.now();
          const error = await engine.acquire(key('down')).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(LockBackendError);
          expect(performance.now() - started).toBeLessThan(10_000);
          await engine.close();
        },
        20_000,
      );
    }

    runner.describe('events and shutdown', () => {
      runner.it("emits acquired, released and timeout with the caller's key and timings", async () => {
        const k = key('events');
        const events: LockEvent[] = [];
        const subscription = a.events.subscribe((event) => events.push(event));
        const lock = await a.acquire(k);
        await a.tryAcquire(k);
        await lock.release();
        subscription.unsubscribe();
        expect(events.map((event) => event.type)).toEqual(['acquired', 'timeout', 'released']);
        expect(events[0]).toMatchObject({ key: k, backend: a.backend.name });
        expect(events[2]).toMatchObject({ key: k, fence: lock.fence });
      });

      runner.it(
        'close() releases held locks for other instances and rejects waiters with LockShuttingDownError',
        async () => {
          const k = key('close');
          const engine = await newEngine();
          const held = await engine.acquire(k);
          const waiter = engine.acquire(k, { waitMs: 10_000 });
          await tick();
          await engine.close();
          await expect(waiter).rejects.toBeInstanceOf(LockShuttingDownError);
          expect(held.signal.aborted).toBe(true);
          const next = await b.acquire(k, { waitMs: 0 });
          await next.release();
          await expect(engine.acquire(k)).rejects.toBeInstanceOf(LockShuttingDownError);
        },
      );
    });
  });
}
