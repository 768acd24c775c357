// ZooKeeper vs Redis backend: acquire+release rate and hand-off latency on local servers.
// Not part of `npm test`. Run: npm test -- --testMatch '**/test/zookeeper/*.bench.ts'
import { afterAll, beforeAll, describe, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine, type BackendOptions } from '../../lib/index.js';
import { RedisServer } from '../harness/redis-server.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';

const ROUNDS = 3;
const SEQUENTIAL = 1_000;
const HANDOFFS = 200;
const CONTENDED = 800;

interface Result {
  sequentialPerSec: number;
  handoffMedianMs: number;
  handoffP95Ms: number;
  contendedPerSec: number;
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
const percentile = (values: number[], p: number) => [...values].sort((x, y) => x - y)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

async function measure(options: BackendOptions): Promise<Result> {
  const [a, b] = [new LockEngine(await createLockBackend(options), { leaseMs: 10_000 }), new LockEngine(await createLockBackend(options), { leaseMs: 10_000 })];
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
      const waiter = b.acquire(k, { waitMs: 10_000 });
      // Give the waiter time for its first (busy) attempt, so that the release hands over to a waiting waiter.
      await new Promise((resolve) => setTimeout(resolve, 5));
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
    await Promise.all(Array.from({ length: 8 }, (_, i) => worker(i % 2 ? a : b)));
    const contendedPerSec = CONTENDED / ((performance.now() - started) / 1000);
    return { sequentialPerSec, handoffMedianMs: median(handoffs), handoffP95Ms: percentile(handoffs, 0.95), contendedPerSec };
  } finally {
    await Promise.allSettled([a.close(), b.close()]);
  }
}

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
    const stores: Record<string, BackendOptions> = {
      zookeeper: { type: 'zookeeper', connectionString: zookeeper.connectionString, rootPath: '/bench' },
      redis: { type: 'redis', url: redis.url },
    };
    const results: Record<string, Result[]> = { zookeeper: [], redis: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 ? ['redis', 'zookeeper'] : ['zookeeper', 'redis']) results[name]!.push(await measure(stores[name]!));
    }
    const lines = Object.entries(results).map(([name, rounds]) => {
      const m = (pick: (r: Result) => number) => median(rounds.map(pick));
      return `| ${name} | ${m((r) => r.sequentialPerSec).toFixed(0)} | ${m((r) => r.contendedPerSec).toFixed(0)} | ${m((r) => r.handoffMedianMs).toFixed(2)} | ${m((r) => r.handoffP95Ms).toFixed(2)} |`;
    });
    console.log(
      [`medians of ${ROUNDS} rounds, ${SEQUENTIAL} sequential cycles, ${CONTENDED} contended (8 workers on 2 instances), ${HANDOFFS} hand-offs`,
        '| backend | acquire+release/s (one caller) | acquire+release/s (8 contending) | hand-off median ms | hand-off p95 ms |',
        '|---|---|---|---|---|', ...lines].join('\n'),
    );
  }, 600_000);
});
