import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { RedisServer } from '../harness/redis-server.js';
import { runWorkers } from '../support/worker-processes.js';

const script = fileURLToPath(new URL('../support/multi-key-worker.mjs', import.meta.url));

interface Done {
  reads: { key: string; fence: number; read: number }[];
  counted: Record<string, number>;
  errors: string[];
  elapsedMs: number;
}

// Two OS processes x 4 workers lock random pairs/triples of 5 keys in random orders on one Redis.
describe('multi-key locks across 2 OS processes on Redis', () => {
  const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4'];
  let server: RedisServer;

  beforeAll(async () => {
    server = await RedisServer.start();
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('finishes within its bound (no deadlock) and loses no update of the per-key counters', async () => {
    // runWorkers also fails unless both processes exit with code 0.
    const results = await runWorkers<Done>(
      script,
      [0, 1].map((p) => ({
        url: server.url,
        keys: KEYS,
        keyPrefix: 'mkp:',
        workers: 4,
        iterations: 60,
        seed: 9_000 + p * 100,
        boundMs: 30_000,
      })),
    );
    const reads = results.flatMap((result) => result.reads);
    const lostUpdates: Record<string, number> = {};
    for (const key of KEYS) {
      const counted = results.reduce((sum, result) => sum + result.counted[key], 0);
      lostUpdates[key] = counted - Number(server.cli('GET', `counter:${key}`));
      // In fence order the holds of a key read 0, 1, 2, ...: never two holders at once, across processes.
      const holds = reads.filter((read) => read.key === key).sort((x, y) => x.fence - y.fence);
      expect(holds.map((hold) => hold.read)).toEqual(holds.map((_, i) => i));
    }
    process.stdout.write(
      `[multi-key, 2 processes x 4 workers on Redis] ${2 * 4 * 60} acquisitions, ${results.map((r) => r.elapsedMs).join(' / ')} ms, ` +
        `lost updates ${JSON.stringify(lostUpdates)}\n`,
    );
    expect(results.flatMap((result) => result.errors)).toEqual([]);
    expect(Object.values(lostUpdates)).toEqual(KEYS.map(() => 0));
    // Both processes really contended for the same keys.
    expect(reads.filter((read) => read.key === 'k0').length).toBeGreaterThan(2 * 4 * 60 * 0.2);
  }, 120_000);
});
