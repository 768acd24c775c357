// The zookeeper backend vs the redis backend on local servers: acquire+release rate of one caller and
// of 8 contending callers on 2 engines, and hand-off latency between 2 engines (release → the waiter
// holds it). Rounds alternate which store goes first, so a burst of load elsewhere hits both.
//   npm run bench:zookeeper   (or: npm run build && node bench/zookeeper-vs-redis.mjs [--rounds 3])
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadPackage } from './lib/package-under-test.mjs';
import { startRedis } from './lib/redis-server.mjs';
import { median } from './lib/stats.mjs';
import { startZookeeper } from './lib/zookeeper-server.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const ROUNDS = Number(values.rounds);
const SEQUENTIAL = 1_000;
const HANDOFFS = 200;
const CONTENDED = 800;
const WORKERS = 8;
/** After the waiter entered its wait: time to finish setting its watch / subscription, so that the release finds it parked. */
const SETTLE_MS = 5;

const { createLockBackend, LockEngine } = await loadPackage();

const percentile = (values, p) =>
  [...values].sort((x, y) => x - y)[Math.min(values.length - 1, Math.floor(values.length * p))];

/** The backend, telling `onWaiting` when one of its claims starts waiting for a change. */
function observeWaiting(backend, onWaiting) {
  return {
    name: backend.name,
    capabilities: backend.capabilities,
    close: () => backend.close(),
    claim(request) {
      const inner = backend.claim(request);
      return {
        tryAcquire: () => inner.tryAcquire(),
        waitForChange(maxMs, signal) {
          onWaiting();
          return inner.waitForChange(maxMs, signal);
        },
        renew: (leaseMs) => inner.renew(leaseMs),
        release: (holdMs) => inner.release(holdMs),
      };
    },
  };
}

async function measure(options) {
  let waiting;
  const a = new LockEngine(await createLockBackend(options), { leaseMs: 10_000 });
  const b = new LockEngine(
    observeWaiting(await createLockBackend(options), () => waiting?.()),
    { leaseMs: 10_000 },
  );
  try {
    const key = `bench:${randomUUID().slice(0, 8)}`;
    await (await a.acquire(key)).release(); // connect and warm up
    await (await b.acquire(key)).release();

    let started = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) await (await a.acquire(key)).release();
    const sequentialPerSec = SEQUENTIAL / ((performance.now() - started) / 1000);

    const handoffs = [];
    for (let i = 0; i < HANDOFFS; i++) {
      const held = await a.acquire(key);
      const parked = new Promise((resolve) => (waiting = resolve));
      const waiter = b.acquire(key, { waitMs: 10_000 });
      await parked;
      waiting = undefined;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const releasedAt = performance.now();
      await held.release();
      const next = await waiter;
      handoffs.push(performance.now() - releasedAt);
      await next.release();
    }

    started = performance.now();
    let left = CONTENDED;
    const worker = async (engine) => {
      while (left-- > 0) await (await engine.acquire(key, { waitMs: 30_000 })).release();
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i % 2 ? a : b)));
    const contendedPerSec = CONTENDED / ((performance.now() - started) / 1000);
    return {
      sequentialPerSec,
      handoffMedianMs: median(handoffs),
      handoffP95Ms: percentile(handoffs, 0.95),
      contendedPerSec,
    };
  } finally {
    await Promise.allSettled([a.close(), b.close()]);
  }
}

const COLUMNS = [
  ['acquire+release/s (one caller)', (r) => r.sequentialPerSec, 0],
  [`acquire+release/s (${WORKERS} contending)`, (r) => r.contendedPerSec, 0],
  ['hand-off median ms', (r) => r.handoffMedianMs, 2],
  ['hand-off p95 ms', (r) => r.handoffP95Ms, 2],
];

const [zookeeper, redis] = await Promise.all([startZookeeper(), startRedis()]);
try {
  const stores = {
    zookeeper: {
      type: 'zookeeper',
      connectionString: zookeeper.connectionString,
      rootPath: `/bench-${randomUUID().slice(0, 8)}`,
    },
    redis: { type: 'redis', url: redis.url },
  };
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const results = {};
    for (const name of round % 2 ? ['redis', 'zookeeper'] : ['zookeeper', 'redis'])
      results[name] = await measure(stores[name]);
    rounds.push(results);
  }
  const row = (label, value) => `| ${label} | ${rounds.map((r) => value(r)).join(' | ')} |`;
  const lines = COLUMNS.flatMap(([label, pick, digits]) => [
    row(`${label}: zookeeper`, (r) => pick(r.zookeeper).toFixed(digits)),
    row(`${label}: redis`, (r) => pick(r.redis).toFixed(digits)),
    row(`${label}: zookeeper / redis`, (r) => (pick(r.zookeeper) / pick(r.redis)).toFixed(2)),
  ]);
  console.log(
    `${ROUNDS} rounds: ${SEQUENTIAL} sequential cycles, ${HANDOFFS} hand-offs between 2 instances, ${CONTENDED} contended cycles (${WORKERS} workers on 2 instances)`,
  );
  console.log(
    `| measure | ${rounds.map((_, i) => `round ${i + 1}`).join(' | ')} |\n|---|${rounds.map(() => '---').join('|')}|`,
  );
  console.log(lines.join('\n'));
} finally {
  zookeeper.stop();
  redis.stop();
}
