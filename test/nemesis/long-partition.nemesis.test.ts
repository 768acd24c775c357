import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { RedisServer } from '../harness/redis-server.js';
import { canUseIptables } from './iptables.js';
import { runNemesis } from './nemesis-runner.js';
import { NEMESIS_SEED } from './nemesis-suite.js';
import { NEMESIS_STORES, type StartedStore } from './nemesis-stores.js';
import { formatNemesisTable } from './nemesis-table.js';
import { PENDING, RECOVERY_BOUND_MS } from './further-checks.js';

// The long partitions (npm run test:nemesis, which sets NEMESIS_LONG=1): a Redis and a PostgreSQL
// client cut off for 30 s with iptables (its kernel retransmits with back-off, as across a real
// partition), then healed: how long until it acquires again (asserted <= 5 s on Redis, whose waiters
// queue; with NEMESIS_PENDING=1 on PostgreSQL too, whose waiters may lose turns to the others).
const LONG = process.env.NEMESIS_LONG === '1';
const PARTITION_MS = Number(process.env.NEMESIS_LONG_PARTITION_MS ?? 30_000);

(LONG && canUseIptables() ? describe : describe.skip)('nemesis: long partitions', () => {
  let resource: RedisServer;
  let dist: Awaited<ReturnType<typeof snapshotDist>>;
  beforeAll(async () => {
    dist = await snapshotDist();
    resource = await RedisServer.start();
  }, 60_000);
  afterAll(async () => {
    await resource?.stop();
    dist?.remove();
  });

  it.each([['redis'], ['postgres']])(`%s: a client partitioned ${PARTITION_MS / 1000} s acquires again after the heal`, async (name) => {
    let store: StartedStore | undefined;
    try {
      store = await NEMESIS_STORES[name]!();
      const run = await runNemesis(store, 'partition tcp', { seed: NEMESIS_SEED, rounds: 1, dist: dist.url, resourceUrl: resource.url, faultMs: PARTITION_MS, recoveryLimitMs: 90_000 });
      process.stdout.write(`\n${formatNemesisTable([run])}\n`);
      expect(run.report.violations.filter((v) => v.kind !== 'overlap')).toEqual([]);
      const recovery = run.report.recoveries[0]?.targetMs ?? Infinity;
      if (name === 'redis' || PENDING) expect(recovery).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    } finally {
      await store?.stop();
    }
  }, 240_000);
});
