// Hand-off benchmark of the redis backend (a measurement, not a test).
// 32 workers in one process contend for one key on a local redis-server started here.
// Hand-off latency = time from a holder's release() call to the next holder's acquire() resolving.
// Usage: npm run bench:handoff [-- --seconds 5 --workers 32 --backends 1]   (builds dist/ first)
// --backends N spreads the workers over N backends (own connections each, like N app instances):
// a hand-off inside one backend wakes the next local waiter directly, one between backends goes
// through the Redis pub/sub release message.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LockEngine, createLockBackend } from '../dist/esm/index.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, workers: { type: 'string', default: '32' }, backends: { type: 'string', default: '1' } } });
const seconds = Number(values.seconds);
const workerCount = Number(values.workers);
const backendCount = Number(values.backends);

const port = await new Promise((resolve, reject) => {
  const server = createServer().once('error', reject);
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const dir = mkdtempSync(join(tmpdir(), 'ndl-bench-redis-'));
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
try {
  for (let i = 0; ; i++) {
    try {
      if (execFileSync('redis-cli', ['-p', String(port), 'PING'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG') break;
    } catch {}
    if (i > 200) throw new Error('redis-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await run();
} finally {
  redis.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}

async function run() {
  const url = `redis://127.0.0.1:${port}`;
  const engines = await Promise.all(Array.from({ length: backendCount }, async () => new LockEngine(await createLockBackend({ type: 'redis', url }), { leaseMs: 10_000, waitMs: 60_000 })));
  const holds = []; // { worker, acquiredAt, releaseCalledAt }
  const perWorker = new Array(workerCount).fill(0);
  const until = performance.now() + seconds * 1000;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: workerCount }, async (_, worker) => {
      while (performance.now() < until) {
        const lock = await engines[worker % backendCount].acquire('bench:handoff');
        const hold = { worker, acquiredAt: performance.now(), releaseCalledAt: 0 };
        perWorker[worker]++;
        holds.push(hold);
        hold.releaseCalledAt = performance.now();
        await lock.release();
      }
    }),
  );
  const elapsed = (performance.now() - startedAt) / 1000;
  await Promise.all(engines.map((engine) => engine.close()));

  holds.sort((a, b) => a.acquiredAt - b.acquiredAt);
  const handoffs = [];
  const acrossBackends = [];
  let toOther = 0;
  for (let i = 1; i < holds.length; i++) {
    const latency = holds[i].acquiredAt - holds[i - 1].releaseCalledAt;
    handoffs.push(latency);
    if (holds[i].worker !== holds[i - 1].worker) toOther++;
    if (holds[i].worker % backendCount !== holds[i - 1].worker % backendCount) acrossBackends.push(latency);
  }
  acrossBackends.sort((a, b) => a - b);
  handoffs.sort((a, b) => a - b);
  const quantile = (q, list = handoffs) => list[Math.min(list.length - 1, Math.floor(q * list.length))];
  const ms = (value) => `${value.toFixed(3)} ms`;
  console.log(`redis hand-off, ${workerCount} workers on ${backendCount} backend(s), one process, one key, ${elapsed.toFixed(1)} s (redis-server ${execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1]}, node ${process.version})`);
  console.log(`  acquisitions:      ${holds.length} (${(holds.length / elapsed).toFixed(0)}/s)`);
  console.log(`  hand-off latency:  median ${ms(quantile(0.5))}, p99 ${ms(quantile(0.99))}, max ${ms(handoffs.at(-1))}`);
  if (acrossBackends.length) {
    console.log(`  between backends:  ${acrossBackends.length} hand-offs (pub/sub), median ${ms(quantile(0.5, acrossBackends))}, p99 ${ms(quantile(0.99, acrossBackends))}`);
  }
  console.log(`  to another worker: ${toOther} of ${handoffs.length} hand-offs (${((100 * toOther) / handoffs.length).toFixed(1)}%)`);
  console.log(`  per worker:        min ${Math.min(...perWorker)}, max ${Math.max(...perWorker)} acquisitions`);
}
