import type { Lock } from '../engine/lock.js';
import type { LockMode } from '../engine/lock-mode.js';
import { BusySpy } from './observed-backend.js';
import { keepingAlive, type ContractTestRunner } from './contract-runner.js';
import { expect } from './contract-expect.js';
import { useContractSuite } from './contract-suite.js';
import type { LockBackendContractTarget } from './contract-target.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Read/write semantics for stores that queue waiters (ZooKeeper, etcd, memory): readers share,
 * writers exclude everyone, waiters are served in arrival order, and a waiting writer is not
 * starved by readers that keep arriving. Runs with the same target as the backend contract.
 */
export function describeReadWriteContract(
  name: string,
  target: LockBackendContractTarget,
  testRunner: ContractTestRunner,
): void {
  const runner = keepingAlive(testRunner);
  runner.describe(`${name} read/write contract`, () => {
    const spy = new BusySpy();
    const suite = useContractSuite(runner, target, 'rw', { leaseMs: 5_000, waitMs: 15_000 }, (backend) =>
      spy.wrap(backend),
    );
    const { keyPrefix, key } = suite;
    /** Engine `i` of the two instances. */
    const engine = (i: number) => (i % 2 === 0 ? suite.a : suite.b);

    runner.it('lets many readers hold the key at once, across instances, and keeps writers out meanwhile', async () => {
      const k = key('readers');
      const readers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => engine(i).acquire(k, { mode: 'read', waitMs: 0 })),
      );
      expect(await engine(0).tryAcquire(k, { mode: 'write' })).toBeNull();
      expect(await engine(1).tryAcquire(k)).toBeNull();
      await Promise.all(readers.map((lock) => lock.release()));
      await (await engine(1).acquire(k, { mode: 'write', waitMs: 0 })).release();
    });

    runner.it(
      'never lets a writer in with anyone else, while readers do overlap',
      async () => {
        const k = key('mixed');
        let readers = 0;
        let writers = 0;
        let maxReaders = 0;
        let violations = 0;
        const task = async (i: number) => {
          const mode: LockMode = i % 4 === 3 ? 'write' : 'read';
          await engine(i).withLock(
            k,
            async () => {
              if (mode === 'write') writers++;
              else readers++;
              maxReaders = Math.max(maxReaders, readers);
              if (writers > 1 || (writers === 1 && readers > 0)) violations++;
              await delay(mode === 'write' ? 5 : 30);
              if (mode === 'write') writers--;
              else readers--;
            },
            { mode, waitMs: 30_000 },
          );
        };
        await Promise.all(Array.from({ length: 24 }, (_, i) => task(i)));
        expect(violations).toBe(0);
        expect(maxReaders).toBeGreaterThan(1);
      },
      40_000,
    );

    runner.it(
      'serves waiters in arrival order: a writer, then the readers behind it together, then the next writer',
      async () => {
        const k = key('fifo');
        const storeKey = keyPrefix + k;
        const log: string[] = [];
        const holder = await engine(0).acquire(k, { mode: 'write' });
        const queue: [string, LockMode][] = [
          ['w1', 'write'],
          ['r2', 'read'],
          ['r3', 'read'],
          ['w4', 'write'],
          ['r5', 'read'],
        ];
        const runs: Promise<void>[] = [];
        const held = new Map<string, Lock>();
        for (const [index, [name, mode]] of queue.entries()) {
          runs.push(
            engine(index + 1)
              .acquire(k, { mode })
              .then(async (lock) => {
                log.push(`+${name}`);
                held.set(name, lock);
                // Readers wait until both readers of their group are in, proving they hold together.
                if (name === 'r2' || name === 'r3')
                  await Promise.all([until(() => held.has('r2')), until(() => held.has('r3'))]);
                else await delay(20);
                log.push(`-${name}`);
                await lock.release();
              }),
          );
          await spy.whenBusy(index + 1, storeKey);
        }
        await holder.release();
        await Promise.all(runs);
        expect(log.slice(0, 2)).toEqual(['+w1', '-w1']);
        expect(new Set(log.slice(2, 4))).toEqual(new Set(['+r2', '+r3']));
        expect(new Set(log.slice(4, 6))).toEqual(new Set(['-r2', '-r3']));
        expect(log.slice(6)).toEqual(['+w4', '-w4', '+r5', '-r5']);
      },
      30_000,
    );

    runner.it(
      'does not starve a waiting writer: readers arriving after it queue behind it',
      async () => {
        const k = key('starve');
        const storeKey = keyPrefix + k;
        const firstReader = await engine(0).acquire(k, { mode: 'read' });
        const writer = engine(1).acquire(k, { mode: 'write', waitMs: 20_000 });
        await spy.whenBusy(1, storeKey);
        // New readers would share with the first reader, but the writer arrived first.
        for (let i = 0; i < 4; i++) expect(await engine(i).tryAcquire(k, { mode: 'read' })).toBeNull();
        const lateReader = engine(0).acquire(k, { mode: 'read', waitMs: 20_000 });
        await firstReader.release();
        const writeLock = await writer;
        expect(await engine(1).tryAcquire(k, { mode: 'read' })).toBeNull();
        await writeLock.release();
        await (await lateReader).release();
      },
      30_000,
    );
  });
}

/** Resolves when `condition` holds, checking on each turn of the event loop (a local flag, not the store). */
function until(condition: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (condition() ? resolve() : setImmediate(check));
    check();
  });
}
