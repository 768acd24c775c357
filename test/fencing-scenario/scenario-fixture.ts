import { afterAll, beforeAll } from '@jest/globals';
import * as lib from '../../lib/index.js';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { openGuardedResource } from './guarded-resource-client.mjs';
import {
  KEY_PREFIX,
  runStaleHolder,
  type LoseLock,
  type ScenarioOutcome,
  type ScenarioResource,
} from './stale-holder-scenario.js';
import { LEASE_MS, ScenarioServers, type ServerName, type ServerStore } from './scenario-servers.js';

/** The servers, a private copy of the built package for holder A, and B's connections to each resource (by label, in the order given). */
export interface ScenarioFixture {
  readonly resources: readonly ScenarioResource[];
  /** Runs the scenario with A and B on `store`; B's engine is also the operator's for a force release. */
  run(store: ServerStore, loseLock: LoseLock): Promise<ScenarioOutcome[]>;
}

/** Starts `servers` once for the file (beforeAll) and stops them after it (afterAll). */
export function useScenarioServers(servers: readonly ServerName[], resourceLabels: readonly string[]): ScenarioFixture {
  let started: ScenarioServers | undefined;
  let dist: Awaited<ReturnType<typeof snapshotDist>> | undefined;
  let resources: ScenarioResource[] = [];
  beforeAll(async () => {
    [started, dist] = await Promise.all([ScenarioServers.start([...servers]), snapshotDist()]);
    const addresses = resourceLabels.map((label) => started!.resources().find((resource) => resource.label === label)!);
    resources = await Promise.all(
      addresses.map(async (address) => ({ address, connectionB: await openGuardedResource(address, lib) })),
    );
  }, 120_000);
  afterAll(async () => {
    await Promise.all(resources.map(({ connectionB }) => connectionB.close()));
    await started?.stop();
    dist?.remove();
  }, 60_000);
  return {
    get resources() {
      return resources;
    },
    async run(store, loseLock) {
      const backend = started!.storeOptions(store);
      const engineB = new LockEngine(await createLockBackend(backend), { keyPrefix: KEY_PREFIX, leaseMs: LEASE_MS });
      try {
        return await runStaleHolder({ loseLock, backend, leaseMs: LEASE_MS, engineB, resources, dist: dist!.url });
      } finally {
        await engineB.close();
      }
    },
  };
}
