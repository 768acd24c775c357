import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLockBackend, LockEngine, MemoryBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { RedisServer } from '../harness/redis-server.js';
import { runMultiKeyLoad, type LoadResult } from './multi-key-load.js';

// Multi-key locks under load: 8 workers over 2 engines lock random pairs and triples of 5 keys,
// given in random orders. Locking in the caller's order would deadlock here within a few rounds
// (each waiter holding a key another waits for); the canonical order must not, and a non-atomic
// counter per key must lose no update.
const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4'];
const WAIT_MS = 20_000;
/** Far more than a clean run takes (well under 1 s on memory, ~2 s on Redis), far less than WAIT_MS. */
const BOUND_MS = 15_000;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function report(name: string, result: LoadResult): void {
  // The numbers a reader of the run wants; asserted below.
  process.stdout.write(
    `[multi-key load, ${name}] ${result.acquisitions} acquisitions in ${result.elapsedMs} ms, ` +
      `${result.lostUpdates} lost updates, ${result.errors.length} errors, per key ${JSON.stringify(result.actual)}\n`,
  );
}

function expectClean(result: LoadResult): void {
  expect(result.finished).toBe(true);
  expect(result.errors).toEqual([]);
  expect(result.actual).toEqual(result.expected);
  expect(result.lostUpdates).toBe(0);
  expect(result.misorderedKeys).toEqual([]);
  // Every acquisition counted 2 or 3 keys.
  const counted = Object.values(result.actual).reduce((sum, n) => sum + n, 0);
  expect(counted).toBeGreaterThanOrEqual(2 * result.acquisitions);
  expect(counted).toBeLessThanOrEqual(3 * result.acquisitions);
}

/** One store seen by two engines that share it without closing it twice. */
function shared(backend: LockBackend): LockBackend {
  return {
    name: backend.name,
    capabilities: backend.capabilities,
    claim: (request) => backend.claim(request),
    close: async () => undefined,
  };
}

describe('multi-key locks under load: no deadlock, no lost update', () => {
  it('memory: 8 workers over 2 engines, 250 random key lists each', async () => {
    const store = new MemoryBackend();
    const engines = [
      new LockEngine(shared(store), { waitMs: WAIT_MS }),
      new LockEngine(shared(store), { waitMs: WAIT_MS }),
    ];
    try {
      const result = await runMultiKeyLoad(engines, {
        workersPerEngine: 4,
        iterations: 250,
        keys: KEYS,
        seed: 2_002,
        gap: tick,
        boundMs: BOUND_MS,
      });
      report('memory', result);
      expectClean(result);
    } finally {
      await Promise.all(engines.map((engine) => engine.close()));
      await store.close();
    }
  }, 60_000);

  describe('redis', () => {
    let server: RedisServer;

    beforeAll(async () => {
      server = await RedisServer.start();
    }, 30_000);

    afterAll(async () => {
      await server?.stop();
    });

    it('8 workers over 2 engines (each its own connection), 100 random key lists each', async () => {
      const engines = await Promise.all(
        [0, 1].map(
          async () =>
            new LockEngine(await createLockBackend({ type: 'redis', url: server.url }), {
              waitMs: WAIT_MS,
              keyPrefix: 'mk:',
            }),
        ),
      );
      try {
        const gap = () => new Promise<void>((resolve) => setTimeout(resolve, Math.random() < 0.5 ? 0 : 1));
        const result = await runMultiKeyLoad(engines, {
          workersPerEngine: 4,
          iterations: 100,
          keys: KEYS,
          seed: 7_002,
          gap,
          boundMs: BOUND_MS,
        });
        report('redis', result);
        expectClean(result);
        // Every lock was released: no key is held in the store.
        expect(KEYS.map((key) => server.cli('EXISTS', redisLockKeys(`mk:${key}`).lock))).toEqual(KEYS.map(() => '0'));
      } finally {
        await Promise.all(engines.map((engine) => engine.close()));
      }
    }, 90_000);
  });
});
