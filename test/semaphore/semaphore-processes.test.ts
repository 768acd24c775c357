import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine, type BackendOptions } from '../../lib/index.js';
import { CHILD_LEASE_TTL_SECONDS, EtcdFixture } from '../etcd/etcd-target.js';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { RedisServer } from '../harness/redis-server.js';
import { holdInChild, runWorkers, type WorkerSetup } from './semaphore-runner.js';

const PERMITS = 3;
const PROCESSES = 4;
const WORKERS = 8;
const RUN_MS = 4_000;
const CRASH_ROUNDS = 3;

interface Store {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  config(): BackendOptions;
  /** The observing parent's options: a long session, so a loaded machine cannot lapse the permits the parent holds. */
  parentConfig(): BackendOptions;
  /** Lease of the processes' engines (etcd: what counts is the lease TTL of `config()`). */
  readonly leaseMs: number;
  /** A killed holder's permit must not free sooner than this (its lease had at least this much left)... */
  readonly crashMinMs: number;
  /** ...and must free within this. */
  readonly crashMaxMs: number;
}

let redis: RedisServer;
const etcd = new EtcdFixture();

const stores: Store[] = [
  {
    name: 'redis',
    start: async () => void (redis = await RedisServer.start()),
    stop: async () => void (await redis?.stop()),
    config: () => ({ type: 'redis', url: redis.url }),
    parentConfig: () => ({ type: 'redis', url: redis.url }),
    // Renewed every lease/3, so 2/3 of it is left when the holder dies if renewals are on time; half of it
    // leaves room for a renewal late by a sixth of the lease on a loaded machine. The waiter retries when the first permit lapses.
    leaseMs: 2_000,
    crashMinMs: 1_000,
    crashMaxMs: 2_000 + 1_500,
  },
  {
    name: 'etcd',
    start: () => etcd.start(),
    stop: () => etcd.stop(),
    config: () => etcd.options(CHILD_LEASE_TTL_SECONDS),
    parentConfig: () => etcd.options(),
    // The lease TTL decides; keepalives every TTL/3; etcd sweeps expired leases every 500 ms.
    leaseMs: 2_000,
    crashMinMs: 1_000,
    crashMaxMs: CHILD_LEASE_TTL_SECONDS * 1000 + 1_500,
  },
];

/** What the runs measured, per store, for docs/semaphores.md. */
const results: Record<string, unknown> = {};

describe.each(stores.map((store) => [store.name, store] as const))(
  '%s: a semaphore shared by OS processes',
  (name, store) => {
    let dist: Awaited<ReturnType<typeof snapshotDist>>;
    const keyPrefix = `sem-proc:${randomUUID().slice(0, 8)}:`;
    const setup = (key: string): WorkerSetup => ({
      dist: dist.url,
      backend: store.config(),
      key,
      keyPrefix,
      leaseMs: store.leaseMs,
      permits: PERMITS,
    });

    beforeAll(async () => {
      dist = await snapshotDist();
      await store.start();
    }, 120_000);

    afterAll(async () => {
      process.stdout.write(`\nsemaphore processes (${name}): ${JSON.stringify(results[name])}\n`);
      mkdirSync('/tmp/ndl-semaphore-results', { recursive: true });
      writeFileSync(`/tmp/ndl-semaphore-results/${name}.json`, JSON.stringify(results[name], null, 2));
      await store.stop();
      dist?.remove();
    }, 60_000);

    it(`${PROCESSES} processes x ${WORKERS} workers, permits = ${PERMITS}: never more than ${PERMITS} holders, and every worker gets in`, async () => {
      const run = await runWorkers(setup(`work:${randomUUID().slice(0, 8)}`), PROCESSES, WORKERS, RUN_MS);
      const perWorker = run.holds.flat();
      const total = perWorker.reduce((sum, n) => sum + n, 0);
      results[name] = {
        ...(results[name] as object),
        maxInside: run.maxInside,
        holds: total,
        holdsPerSecond: Math.round(total / run.seconds),
        fewestHoldsOfAWorker: Math.min(...perWorker),
      };
      expect(run.violations).toBe(0);
      // The parent saw the semaphore full: the count can reach the limit, so it would see a fourth holder.
      expect(run.maxInside).toBe(PERMITS);
      expect(perWorker).toHaveLength(PROCESSES * WORKERS);
      expect(Math.min(...perWorker)).toBeGreaterThanOrEqual(1);
      expect(run.errors).toEqual(Array.from({ length: PROCESSES }, () => ({})));
    }, 90_000);

    it('frees the permit of a SIGKILLed holder process after its lease, not before', async () => {
      const engine = new LockEngine(await createLockBackend(store.parentConfig()), { keyPrefix, leaseMs: 5_000 });
      const freedAfterMs: number[] = [];
      try {
        for (let round = 0; round < CRASH_ROUNDS; round++) {
          const key = `crash:${randomUUID().slice(0, 8)}`;
          const mine = [await engine.semaphore(key, PERMITS), await engine.semaphore(key, PERMITS)];
          const holder = await holdInChild(setup(key));
          expect(await engine.tryAcquire(key, { permits: PERMITS })).toBeNull();
          // Killed at a different point of its renewal cycle each round: at once, then after a renewal or two.
          await new Promise((resolve) => setTimeout(resolve, round * 450));
          await holder.kill();
          const killedAt = performance.now();
          const next = await engine.semaphore(key, PERMITS, { waitMs: store.crashMaxMs + 5_000 });
          freedAfterMs.push(Math.round(performance.now() - killedAt));
          if (holder.fence !== undefined) expect(next.fence!).toBeGreaterThan(holder.fence);
          await Promise.all([...mine, next].map((lock) => lock.release()));
        }
      } finally {
        await engine.close();
      }
      results[name] = { ...(results[name] as object), crashFreedAfterMs: freedAfterMs };
      for (const ms of freedAfterMs) {
        expect(ms).toBeGreaterThanOrEqual(store.crashMinMs);
        expect(ms).toBeLessThan(store.crashMaxMs);
      }
    }, 90_000);
  },
);
