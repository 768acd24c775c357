import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { RedisServer } from '../harness/redis-server.js';

// Needs the built package (dist/esm): `npm test` builds it first.
const script = fileURLToPath(new URL('../support/redis-counter-worker.mjs', import.meta.url));

interface Hold {
  fence: number;
  start: number;
  end: number;
  pid: number;
  worker: number;
}

function startWorker(params: Record<string, unknown>) {
  const child = spawn(process.execPath, [script, JSON.stringify(params)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  // Lines are queued as they come, so none is lost while the test awaits another worker.
  const queue: string[] = [];
  const readers: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => (readers.shift() ?? ((l: string) => queue.push(l)))(line));
  const exited = once(child, 'exit');
  const nextLine = () =>
    Promise.race([
      new Promise<string>((resolve) => (queue.length ? resolve(queue.shift()!) : readers.push(resolve))).then((line) => JSON.parse(line) as { event: string; holds?: Hold[] }),
      exited.then(([code]) => Promise.reject(new Error(`worker exited (${code}): ${stderr}`))),
    ]);
  return { child, nextLine, exited, stderr: () => stderr };
}

describe('redis backend: 4 OS processes x 8 workers on one key', () => {
  let server: RedisServer;
  let redis: Redis;
  const PROCESSES = 4;
  const WORKERS = 8;
  const ITERATIONS = 25;

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
  }, 30_000);

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('loses no update of a non-atomic counter, and fences order the holds in time without overlap', async () => {
    const params = { url: server.url, key: 'hammer', counterKey: 'hammer-counter', keyPrefix: 'mp:', workers: WORKERS, iterations: ITERATIONS };
    const workers = Array.from({ length: PROCESSES }, () => startWorker(params));
    try {
      for (const worker of workers) expect((await worker.nextLine()).event).toBe('ready');
      for (const worker of workers) worker.child.stdin!.end('go\n');
      const results = await Promise.all(workers.map((worker) => worker.nextLine()));
      const codes = await Promise.all(workers.map((worker) => worker.exited));
      expect(codes.map(([code]) => code)).toEqual(workers.map(() => 0));

      const total = PROCESSES * WORKERS * ITERATIONS;
      expect(Number(await redis.get('hammer-counter'))).toBe(total);

      const holds = results.flatMap((result) => result.holds!);
      expect(holds).toHaveLength(total);
      expect(new Set(holds.map((hold) => hold.fence)).size).toBe(total);
      expect(new Set(holds.map((hold) => hold.pid)).size).toBe(PROCESSES);
      holds.sort((x, y) => x.fence - y.fence);
      const overlaps = holds.filter((hold, i) => hold.end < hold.start || (i > 0 && hold.start < holds[i - 1]!.end));
      expect(overlaps).toEqual([]);
      // Hand-offs between processes really happened (not one process after the other).
      const crossProcess = holds.filter((hold, i) => i > 0 && hold.pid !== holds[i - 1]!.pid).length;
      expect(crossProcess).toBeGreaterThan(PROCESSES);
    } finally {
      for (const worker of workers) worker.child.kill('SIGKILL');
    }
  }, 120_000);
});
