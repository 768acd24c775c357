import { randomUUID } from 'node:crypto';
import { ZOOKEEPER_TICK_MS, ZookeeperServer } from '../harness/zookeeper-server.js';
import { describeTickSuite } from './tick-suite.js';

const SESSION_TIMEOUT_MS = 2_000;
let server: ZookeeperServer | undefined;

describeTickSuite({
  name: 'zookeeper',
  start: async () => void (server = await ZookeeperServer.start()),
  stop: async () => server?.destroy(),
  processConfig: () => ({
    type: 'zookeeper',
    url: server!.connectionString,
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    rootPath: `/ndl-ticks-${randomUUID().slice(0, 8)}`,
  }),
  // Ephemeral nodes live as long as their session: ZooKeeper refuses minHoldMs (see docs/backends/zookeeper.md).
  minHold: false,
  periodMs: 1_000,
  // The session timeout, plus the server's expiry tick.
  crashFreeMs: SESSION_TIMEOUT_MS + 2 * ZOOKEEPER_TICK_MS,
});
