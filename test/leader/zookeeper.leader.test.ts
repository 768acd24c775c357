import { randomUUID } from 'node:crypto';
import { ZOOKEEPER_TICK_MS, ZookeeperServer } from '../harness/zookeeper-server.js';
import { describeLeaderSuite } from './leader-suite.js';

// One standalone ZooKeeper (tickTime 500 ms) and 2 s sessions: a killed or paused leader's session
// expires, and with it its node (the LeaderLatch recipe: the lowest sequential node leads).
const SESSION_TIMEOUT_MS = 2_000;
let server: ZookeeperServer;

describeLeaderSuite({
  name: 'zookeeper',
  async start() {
    server = await ZookeeperServer.start();
    const rootPath = `/ndl-leader-${randomUUID().slice(0, 8)}`;
    return {
      name: 'zookeeper',
      backend: () => ({
        type: 'zookeeper',
        url: server.connectionString,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        connectTimeoutMs: 2_000,
        rootPath,
      }),
      leaseMs: 2_000,
      lossMs: SESSION_TIMEOUT_MS + 2 * ZOOKEEPER_TICK_MS + 600,
      restartStore: () => server.restart(),
      freezeStore: () => server.pause(),
      thawStore: () => server.resume(),
    };
  },
  stop: async () => server?.destroy(),
});
