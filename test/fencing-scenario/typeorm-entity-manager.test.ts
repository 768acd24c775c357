import { afterAll, beforeAll, describe, it } from '@jest/globals';
import * as lib from '../../lib/index.js';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { openGuardedResource } from './guarded-resource-client.mjs';
import {
  expectStaleWriteRefused,
  KEY_PREFIX,
  runStaleHolder,
  type ScenarioOutcome,
  type ScenarioResource,
} from './stale-holder-scenario.js';
import { LEASE_MS, ScenarioServers } from './scenario-servers.js';

// The paused-holder scenario once through TypeORM: both holders write in
// `dataSource.transaction(em => guard.check(em.query.bind(em), ...) then em.query(upsert))`, so
// the guard's check commits or rolls back with the write. Locks in PostgreSQL too.
describe('TypeORM EntityManager on PostgreSQL: holder A paused (SIGSTOP) past its lease, B acquires and writes, A resumes and writes', () => {
  let servers: ScenarioServers;
  let dist: Awaited<ReturnType<typeof snapshotDist>>;
  let resource: ScenarioResource | undefined;
  let outcome: ScenarioOutcome | undefined;

  beforeAll(async () => {
    [servers, dist] = await Promise.all([ScenarioServers.start(['postgres']), snapshotDist()]);
    const address = { kind: 'typeorm-postgres' as const, url: servers.resources()[0].url };
    resource = { address, connectionB: await openGuardedResource(address, lib) };
    const engineB = new LockEngine(await createLockBackend(servers.storeOptions('postgres')), {
      keyPrefix: KEY_PREFIX,
      leaseMs: LEASE_MS,
    });
    try {
      [outcome] = await runStaleHolder({
        loseLock: 'pause',
        backend: servers.storeOptions('postgres'),
        leaseMs: LEASE_MS,
        engineB,
        resources: [resource],
        dist: dist.url,
      });
    } finally {
      await engineB.close();
    }
  }, 120_000);
  afterAll(async () => {
    await resource?.connectionB.close();
    await servers?.stop();
    dist?.remove();
  }, 60_000);

  it("A's write is refused with StaleFenceError inside its transaction, B's value stands", () => {
    expectStaleWriteRefused(outcome);
  });
});
