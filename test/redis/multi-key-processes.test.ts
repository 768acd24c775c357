import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { RedisServer } from '../harness/redis-server.js';

const script = fileURLToPath(new URL('../support/multi-key-worker.mjs', import.meta.url));

interface Done {
  event: 'done';
  reads: { key: string; fence: number; read: number }[];
  counted: Record<string, number>;
  errors: string[];
  elapsedMs: number;
}

function startWorker(params: Record<string, unknown>) {
  const child = spawn(process.execPath, [script, JSON.stringify(params)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = once(child, 'exit');
  const nextLine = async () => {
    const next = await Promise.race([lines.next(), exited.then(([code]) => Promise.reject(new Error(`worker exited (${code}): ${stderr}`)))]);
    return JSON.parse((next as IteratorResult<string>).value) as { event: string } & Partial<Done>;
  };
  return { child, nextLine, exited };
}

// Two OS processes x 4 workers lock random pairs/triples of 5 keys in random orders on one Redis.
describe('multi-key locks across 2 OS processes on Redis', () => {
  const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4'];
  let server: RedisServer;
  let dist: { url: string; remove(): void };

  beforeAll(async () => {
    [server, dist] = await Promise.all([RedisServer.start(), snapshotDist()]);
  }, 90_000);

  afterAll(async () => {
    dist?.remove();
    await server?.stop();
  });

  it('finishes within its bound (no deadlock) and loses no update of the per-key counters', async () => {
    const workers = [0, 1].map((p) =>
      startWorker({ url: server.url, dist: dist.url, keys: KEYS, keyPrefix: 'mkp:', workers: 4, iterations: 60, seed: 9_000 + p * 100, boundMs: 30_000 }),
    );
    try {
      for (const worker of workers) expect((await worker.nextLine()).event).toBe('ready');
      for (const worker of workers) worker.child.stdin!.end('go\n');
      const results = (await Promise.all(workers.map((worker) => worker.nextLine()))) as Done[];
      expect((await Promise.all(workers.map((worker) => worker.exited))).map(([code]) => code)).toEqual([0, 0]);

      const reads = results.flatMap((result) => result.reads);
      const lostUpdates: Record<string, number> = {};
      for (const key of KEYS) {
        const counted = results.reduce((sum, result) => sum + result.counted[key]!, 0);
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
    } finally {
      for (const worker of workers) worker.child.kill('SIGKILL');
    }
  }, 120_000);
});
