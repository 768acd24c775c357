import { afterAll, beforeAll, describe, it } from '@jest/globals';
import * as lib from '../../lib/index.js';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { openGuardedResource } from './guarded-resource-client.mjs';
import { expectStaleWriteRefused, KEY_PREFIX, runStaleHolder, type ScenarioOutcome, type ScenarioResource } from './stale-holder-scenario.js';
import { LEASE_MS, ScenarioServers, type ServerStore } from './scenario-servers.js';

// After an operator's forceRelease: A (a process) holds the lock and has written; the operator
// frees the key; B acquires at once and writes; A, still running and not yet told (its signal
// aborts at its next renewal; it does not look), writes with its fence: refused, B's value stands.
const STORES: readonly ServerStore[] = ['redis', 'postgres'];
const RESOURCES = ['PostgreSQL', 'Redis'] as const;

let servers: ScenarioServers;
let dist: Awaited<ReturnType<typeof snapshotDist>>;
let resources: ScenarioResource[] = [];

beforeAll(async () => {
  [servers, dist] = await Promise.all([ScenarioServers.start(['postgres', 'redis']), snapshotDist()]);
  const addresses = RESOURCES.map((label) => servers.resources().find((resource) => resource.label === label)!);
  resources = await Promise.all(addresses.map(async (address) => ({ address, connectionB: await openGuardedResource(address, lib) })));
}, 120_000);
afterAll(async () => {
  await Promise.all(resources.map(({ connectionB }) => connectionB.close()));
  await servers?.stop();
  dist?.remove();
}, 60_000);

describe.each(STORES.map((store) => [store]))('%s lock store: an operator force-releases A\'s lock, B acquires and writes, A writes on', (store) => {
  let outcomes: ScenarioOutcome[] = [];
  beforeAll(async () => {
    // B's engine is also the operator's (the admin endpoint or the CLI would call the same forceRelease).
    const engineB = new LockEngine(await createLockBackend(servers.storeOptions(store)), { keyPrefix: KEY_PREFIX, leaseMs: LEASE_MS });
    try {
      outcomes = await runStaleHolder({ loseLock: 'force-release', backend: servers.storeOptions(store), leaseMs: LEASE_MS, engineB, resources, dist: dist.url });
    } finally {
      await engineB.close();
    }
  }, 45_000);

  it.each(RESOURCES.map((label, i) => [label, i] as const))('resource in %s: A\'s write is refused with StaleFenceError, B\'s value stands', (_label, i) => {
    expectStaleWriteRefused(outcomes[i]);
  });
});
