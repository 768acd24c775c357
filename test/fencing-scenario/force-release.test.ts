import { beforeAll, describe, it } from '@jest/globals';
import { expectStaleWriteRefused, type ScenarioOutcome } from './stale-holder-scenario.js';
import { useScenarioServers } from './scenario-fixture.js';
import type { ServerStore } from './scenario-servers.js';

// After an operator's forceRelease: A (a process) holds the lock and has written; the operator
// frees the key; B acquires at once and writes; A, still running and not yet told (its signal
// aborts at its next renewal; it does not look), writes with its fence: refused, B's value stands.
const STORES: readonly ServerStore[] = ['redis', 'postgres'];
const RESOURCES = ['PostgreSQL', 'Redis'] as const;

const scenario = useScenarioServers(['postgres', 'redis'], RESOURCES);

describe.each(STORES.map((store) => [store]))(
  "%s lock store: an operator force-releases A's lock, B acquires and writes, A writes on",
  (store) => {
    let outcomes: ScenarioOutcome[] = [];
    beforeAll(async () => {
      // B's engine is also the operator's (the admin endpoint or the CLI would call the same forceRelease).
      outcomes = await scenario.run(store, 'force-release');
    }, 45_000);

    it.each(RESOURCES.map((label, i) => [label, i] as const))(
      "resource in %s: A's write is refused with StaleFenceError, B's value stands",
      (_label, i) => {
        expectStaleWriteRefused(outcomes[i]);
      },
    );
  },
);
