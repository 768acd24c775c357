import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { runFailovers, summarise, type FailoverRow, type FailoverRun } from './failover-runner.js';
import { GuardedLog } from './guarded-log.js';
import { clusterTopology, sentinelTopology, type FailoverTopology } from './failover-topologies.js';

// Real failovers on 127.0.0.1: 3 processes x 4 workers hold locks on fenced counters while the
// keys' master is SIGKILLed (replication cut for 2 s before, so that it dies with writes its
// replicas never saw). `npm test` runs 1 failover per configuration (~70 s in all); `npm run
// test:failover` runs FAILOVERS=20 and prints the table of docs/backends/redis.md. Every holder also
// writes its fence through RedisFenceGuard to a separate Redis, lost or not: the guard must never
// let an older holder's write in after a newer holder's (fences stay increasing across a failover:
// the new master's clock floors them).
const FAILOVERS = Number(process.env.FAILOVERS ?? 1);
const REPLICAS = { min: 1, timeoutMs: 500 };
const rows: FailoverRow[] = [];
let guardedLog: GuardedLog;

beforeAll(async () => {
  guardedLog = await GuardedLog.start();
});
afterAll(() => guardedLog?.stop());

/** The guarded writes of one run: some accepted, none of an older holder after a newer holder's, the log matching the workers' count. */
async function expectGuardedOrder(
  run: FailoverRun,
  guarded: { prefix: string },
  keys: readonly string[],
): Promise<void> {
  const { olderAfterNewer, accepted } = await guardedLog.read(guarded, keys);
  const counts = run.workerStats.map((stats) => stats.guarded as { accepted: number; refused: number; failed: number });
  const sum = (pick: (c: (typeof counts)[number]) => number) => counts.reduce((total, c) => total + pick(c), 0);
  process.stdout.write(
    `guarded writes: ${accepted} accepted, ${sum((c) => c.refused)} refused (StaleFenceError), ${sum((c) => c.failed)} failed\n`,
  );
  expect(olderAfterNewer).toBe(0);
  expect(accepted).toBeGreaterThan(0);
  expect(accepted).toBe(sum((c) => c.accepted));
}

const topologies: [string, () => Promise<FailoverTopology>][] = [
  ['Sentinel', sentinelTopology],
  ['Cluster', clusterTopology],
];

afterAll(() => {
  if (rows.length === 0) return;
  process.stdout.write(`\nFailover table (${FAILOVERS} failovers per configuration):\n${summarise(rows)}\n`);
  mkdirSync('/tmp/ndl-failover-results', { recursive: true });
  writeFileSync(`/tmp/ndl-failover-results/failovers-${FAILOVERS}.json`, JSON.stringify(rows, null, 2));
});

describe.each(topologies)('redis backend across %s failovers', (_name, start) => {
  let topology: FailoverTopology;
  beforeAll(async () => {
    topology = await start();
  }, 120_000);
  afterAll(() => topology?.stop(), 60_000);

  it(
    `without \`replicas\`: fences still only go up (clock-based fences), no guarded write of an older holder after a newer holder's; second holders and lost updates are counted`,
    async () => {
      const guarded = guardedLog.newRun();
      const run = await runFailovers(topology, undefined, FAILOVERS, { rows, guarded });
      expect(run.rows).toHaveLength(FAILOVERS);
      for (const row of run.rows) expect(row.fenceRegressions).toBe(0);
      await expectGuardedOrder(run, guarded, topology.keys);
    },
    120_000 + FAILOVERS * 60_000,
  );

  it(
    `with \`replicas: { min: 1 }\`: no second holder, no lost update, fences strictly increasing across every failover, guarded writes in fence order`,
    async () => {
      const guarded = guardedLog.newRun();
      const run = await runFailovers(topology, REPLICAS, FAILOVERS, { rows, guarded });
      expect(run.rows).toHaveLength(FAILOVERS);
      for (const row of run.rows) {
        expect({
          failover: row.failover,
          secondHolders: row.secondHolders,
          lostUpdates: row.lostUpdates,
          staleWrites: row.staleWrites,
          fenceRegressions: row.fenceRegressions,
        }).toEqual({ failover: row.failover, secondHolders: 0, lostUpdates: 0, staleWrites: 0, fenceRegressions: 0 });
      }
      await expectGuardedOrder(run, guarded, topology.keys);
    },
    120_000 + FAILOVERS * 60_000,
  );
});
