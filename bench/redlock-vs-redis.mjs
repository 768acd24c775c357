// Sequential acquire + release per second: the redlock backend over 5 masters vs the redis
// backend on 1 node, all local redis-servers started here (127.0.0.1, free ports, no persistence).
// Rounds alternate between the two so that machine noise hits both alike; prints medians and the ratio.
// npm run bench:redlock [-- opsPerRound=2000 rounds=7] (builds first; NDL_BENCH_DIST names another build)
import { spawn } from 'node:child_process';
import { createServer, createConnection } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { loadPackage } from './lib/package-under-test.mjs';

const { createLockBackend, LockEngine } = await loadPackage();

const OPS = Number(process.argv[2] ?? 2_000);
const ROUNDS = Number(process.argv[3] ?? 7);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function answersPing(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => (socket.destroy(), resolve(data.toString().startsWith('+PONG'))));
    socket.once('error', () => resolve(false));
  });
}

async function startRedis() {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', '/tmp'],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 200 && !(await answersPing(port)); i++) await delay(25);
  return { port, url: `redis://127.0.0.1:${port}`, child };
}

/** Acquire + release of one key, OPS times in a row; resolves ops per second. */
async function measure(engine) {
  const started = performance.now();
  for (let i = 0; i < OPS; i++) {
    const lock = await engine.acquire('bench', { waitMs: 0 });
    await lock.release();
  }
  return OPS / ((performance.now() - started) / 1_000);
}

const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

const servers = await Promise.all(Array.from({ length: 6 }, startRedis));
try {
  const redlock = new LockEngine(
    await createLockBackend({ type: 'redlock', urls: servers.slice(0, 5).map((s) => s.url) }),
    { keyPrefix: 'bench:', leaseMs: 10_000 },
  );
  const redis = new LockEngine(await createLockBackend({ type: 'redis', url: servers[5].url }), {
    keyPrefix: 'bench:',
    leaseMs: 10_000,
  });
  // Warm-up: connections, script caches, JIT.
  await measure(redlock);
  await measure(redis);
  const results = { redlock: [], redis: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? ['redis', 'redlock'] : ['redlock', 'redis'];
    for (const name of order) results[name].push(await measure(name === 'redlock' ? redlock : redis));
  }
  const redlockMedian = median(results.redlock);
  const redisMedian = median(results.redis);
  console.log(`sequential acquire+release, ${OPS} ops x ${ROUNDS} interleaved rounds (node ${process.version})`);
  console.log(
    `redlock (5 masters): median ${redlockMedian.toFixed(0)} ops/s  [${results.redlock.map((v) => v.toFixed(0)).join(', ')}]`,
  );
  console.log(
    `redis   (1 node):    median ${redisMedian.toFixed(0)} ops/s  [${results.redis.map((v) => v.toFixed(0)).join(', ')}]`,
  );
  console.log(`ratio redlock / redis: ${(redlockMedian / redisMedian).toFixed(2)}`);
  await redlock.close();
  await redis.close();
} finally {
  for (const server of servers) server.child.kill('SIGKILL');
}
