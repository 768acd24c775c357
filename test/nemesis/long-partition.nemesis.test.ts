import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { RedisServer } from '../harness/redis-server.js';
import { runNemesis } from './nemesis-runner.js';
import { itRow, NEMESIS_SEED, rowTitle } from './nemesis-suite.js';
import { NEMESIS_STORES, type StartedStore } from './nemesis-stores.js';
import { formatNemesisTable } from './nemesis-table.js';
import { rowChecks } from './row-checks.js';

// The long partitions (npm run test:nemesis, which sets NEMESIS_LONG=1): a Redis and a PostgreSQL
// client cut off for 30 s with iptables (its kernel retransmits with back-off, as across a real
// partition), then healed. Every check of a nemesis row holds, the cut-off client's recovery
// included.
const PARTITION_MS = Number(process.env.NEMESIS_LONG_PARTITION_MS ?? 30_000);

describe('nemesis: long partitions', () => {
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

  for (const name of ['redis', 'postgres']) {
    itRow(
      'partition tcp',
      `${name}, cut off ${PARTITION_MS / 1000} s: ${rowTitle('partition tcp')}`,
      true,
      async () => {
        let store: StartedStore | undefined;
        try {
          store = await NEMESIS_STORES[name]();
          const run = await runNemesis(store, 'partition tcp', {
            seed: NEMESIS_SEED,
            rounds: 1,
            dist: dist.url,
            resourceUrl: resource.url,
            faultMs: PARTITION_MS,
            recoveryLimitMs: 90_000,
          });
          process.stdout.write(`\n${formatNemesisTable([run], store)}\n`);
          expect(rowChecks(run, store).filter((check) => !check.passed)).toEqual([]);
        } finally {
          await store?.stop();
        }
      },
      240_000,
    );
  }
});
