import { describe, expect, it } from '@jest/globals';
import { LockEngine, MemoryBackend } from '../../lib/index.js';
import { FOOTPRINT_KEYS } from './footprint-runner.js';

describe(`memory: footprint after ${FOOTPRINT_KEYS.toLocaleString('en-US')} distinct keys`, () => {
  it('keeps no state for a key nobody holds or waits for (plain, read, fair and semaphore locks)', async () => {
    const backend = new MemoryBackend();
    const engine = new LockEngine(backend, { leaseMs: 1_000, waitMs: 5_000 });
    const kinds = [
      async (key: string) => (await engine.acquire(key)).release(),
      async (key: string) => (await engine.acquire(key, { mode: 'read' })).release(),
      async (key: string) => {
        const first = await engine.acquire(key, { fair: true });
        const second = engine.acquire(key, { fair: true });
        await first.release();
        await (await second).release();
      },
      async (key: string) => (await engine.semaphore(key, 2)).release(),
    ];
    let next = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < FOOTPRINT_KEYS) {
          const i = next++;
          await kinds[i % kinds.length](`fp:${i}`);
          peak = Math.max(peak, backend.trackedKeys());
        }
      }),
    );
    // The count can see keys: up to one per concurrent caller while they lock.
    expect(peak).toBeGreaterThan(0);
    expect(backend.trackedKeys()).toBe(0);
    await engine.close();
  }, 60_000);
});
