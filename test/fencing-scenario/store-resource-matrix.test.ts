import { beforeAll, describe, it } from '@jest/globals';
import { LockEngine, MemoryBackend } from '../../lib/index.js';
import {
  expectStaleWriteRefused,
  KEY_PREFIX,
  runBlockedHolderInProcess,
  type ScenarioOutcome,
} from './stale-holder-scenario.js';
import { useScenarioServers } from './scenario-fixture.js';
import type { ServerStore } from './scenario-servers.js';

// The Kleppmann scenario for every store that issues fences x a resource in PostgreSQL, MariaDB and
// Redis, each written through the library's guard: A's write after its pause is refused with
// StaleFenceError (A's fence, B's as the highest) and B's value stands. One set of servers for all
// 18 pairs; per store, one run in which both holders write to all three resources under one lock.
const STORES: readonly ServerStore[] = ['redis', 'zookeeper', 'etcd', 'postgres', 'mysql'];
const RESOURCES = ['PostgreSQL', 'MariaDB', 'Redis'] as const;

const scenario = useScenarioServers(['postgres', 'mariadb', 'redis', 'zookeeper', 'etcd'], RESOURCES);

describe.each(STORES.map((store) => [store]))(
  '%s lock store: holder A (a process) paused by SIGSTOP past its lease, B acquires and writes, A resumes and writes',
  (store) => {
    let outcomes: ScenarioOutcome[] = [];
    beforeAll(async () => {
      outcomes = await scenario.run(store, 'pause');
    }, 45_000);

    it.each(RESOURCES.map((label, i) => [label, i] as const))(
      "resource in %s: A's write is refused with StaleFenceError, B's value stands",
      (_label, i) => {
        expectStaleWriteRefused(outcomes[i]);
      },
    );
  },
);

describe('memory lock store (one process: A and B are two holders of one engine; A is held back by a blocked event loop, not SIGSTOP)', () => {
  let outcomes: ScenarioOutcome[] = [];
  beforeAll(async () => {
    const engine = new LockEngine(new MemoryBackend(), { keyPrefix: KEY_PREFIX });
    try {
      outcomes = await runBlockedHolderInProcess(
        engine,
        scenario.resources.map(({ connectionB }) => connectionB),
        300,
      );
    } finally {
      await engine.close();
    }
  });

  it.each(RESOURCES.map((label, i) => [label, i] as const))(
    "resource in %s: A's lease lapses while the loop is blocked, B acquires and writes, A's late write is refused, B's value stands",
    (_label, i) => {
      expectStaleWriteRefused(outcomes[i]);
    },
  );
});
