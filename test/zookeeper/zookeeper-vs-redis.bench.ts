// ZooKeeper vs Redis backend: acquire+release rate, hand-off latency and contended rate on local servers.
// Not part of the normal test run (the name does not match *.test.ts). Run:
// NODE_OPTIONS="--experimental-vm-modules --disable-warning=ExperimentalWarning" npx jest --testMatch '**/test/zookeeper/*.bench.ts' test/zookeeper/zookeeper-vs-redis.bench.ts
import { afterAll, beforeAll, describe, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine, type BackendOptions, type LockBackend } from '../../lib/index.js';
import { RedisServer } from '../harness/redis-server.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { observeBackend } from '../support/observed-backend.js';

const ROUNDS = 3;
const SEQUENTIAL = 1_000;
const HANDOFFS = 200;
const CONTENDED = 800;
const WORKERS = 8;
/** After the waiter entered its wait: time to finish setting its watch / subscription, so that the release finds it parked. */
const SETTLE_MS = 5;

interface Result {
  sequentialPerSec: number;
  handoffMedianMs: number;
  handoffP95Ms: number;
  contendedPerSec: number;
}

const sorted = (values: number[]) => [...values].sort((x, y) => x - y);
const median = (values: number[]) => sorted(values)[Math.floor(values.length / 2)]!;
const percentile = (values: number[], p: number) => sorted(values)[Math.min(values.length - 1, Math.floor(values.length * p))]!;


async function measure(options: BackendOptions): Promise<Result> {
  let waiting: (() => void) | undefined;
  const a = new LockEngine(await createLockBackend(options), { leaseMs: 10_000 });
  const b = new LockEngine(observeBackend(await createLockBackend(options), { waiting: () => waiting?.() }), { leaseMs: 10_000 });
  try {
    const k = `bench:${randomUUID().slice(0, 8)}`;
    await (await a.acquire(k)).release(); // connect and warm up
    await (await b.acquire(k)).release();

    let started = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) await (await a.acquire(k)).release();
    const sequentialPerSec = SEQUENTIAL / ((performance.now() - started) / 1000);

    const handoffs: number[] = [];
    for (let i = 0; i < HANDOFFS; i++) {
      const held = await a.acquire(k);
      const parked = new Promise<void>((resolve) => (waiting = resolve));
      const waiter = b.acquire(k, { waitMs: 10_000 });
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
    const worker = async (engine: LockEngine) => {
      while (left-- > 0) await (await engine.acquire(k, { waitMs: 30_000 })).release();
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i % 2 ? a : b)));
    const contendedPerSec = CONTENDED / ((performance.now() - started) / 1000);
    return { sequentialPerSec, handoffMedianMs: median(handoffs), handoffP95Ms: percentile(handoffs, 0.95), contendedPerSec };
  } finally {
    await Promise.allSettled([a.close(), b.close()]);
  }
}

const COLUMNS: [string, (r: Result) => number, number][] = [
  ['acquire+release/s (one caller)', (r) => r.sequentialPerSec, 0],
  [`acquire+release/s (${WORKERS} contending)`, (r) => r.contendedPerSec, 0],
  ['hand-off median ms', (r) => r.handoffMedianMs, 2],
  ['hand-off p95 ms', (r) => r.handoffP95Ms, 2],
];

describe('zookeeper vs redis backend', () => {
  let zookeeper: ZookeeperServer;
  let redis: RedisServer;

  beforeAll(async () => {
    [zookeeper, redis] = await Promise.all([ZookeeperServer.start(), RedisServer.start()]);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([zookeeper?.destroy(), redis?.stop()]);
  });

  it('measures', async () => {
    const stores: Record<'zookeeper' | 'redis', BackendOptions> = {
      zookeeper: { type: 'zookeeper', connectionString: zookeeper.connectionString, rootPath: `/bench-${randomUUID().slice(0, 8)}` },
      redis: { type: 'redis', url: redis.url },
    };
    const rounds: Record<'zookeeper' | 'redis', Result>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved, alternating which store goes first, so that a burst of load elsewhere hits both.
      const order = round % 2 ? (['redis', 'zookeeper'] as const) : (['zookeeper', 'redis'] as const);
      const results = {} as Record<'zookeeper' | 'redis', Result>;
      for (const name of order) results[name] = await measure(stores[name]);
      rounds.push(results);
    }
    const row = (label: string, value: (r: Record<'zookeeper' | 'redis', Result>) => string[]) => `| ${label} | ${rounds.map((r) => value(r).join(' | ')).join(' | ')} |`;
    const lines = COLUMNS.flatMap(([label, pick, digits]) => [
      row(`${label}: zookeeper`, (r) => [pick(r.zookeeper).toFixed(digits)]),
      row(`${label}: redis`, (r) => [pick(r.redis).toFixed(digits)]),
      row(`${label}: zookeeper / redis`, (r) => [(pick(r.zookeeper) / pick(r.redis)).toFixed(2)]),
    ]);
    console.log(
      [`${ROUNDS} rounds: ${SEQUENTIAL} sequential cycles, ${HANDOFFS} hand-offs between 2 instances, ${CONTENDED} contended cycles (${WORKERS} workers on 2 instances)`,
        `| measure | ${rounds.map((_, i) => `round ${i + 1}`).join(' | ')} |`, `|---|${rounds.map(() => '---').join('|')}|`, ...lines].join('\n'),
    );
  }, 600_000);
});
