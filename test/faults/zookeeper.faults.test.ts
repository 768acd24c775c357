import { randomUUID } from 'node:crypto';
import { ZOOKEEPER_TICK_MS, ZookeeperServer } from '../harness/zookeeper-server.js';
import { describeFaultSuite } from './fault-suite.js';

// One standalone ZooKeeper (tickTime 500 ms) and 1.5 s sessions: a paused or blocked holder's
// session expires, and with it its lock node. "restart store" is a SIGKILL and restart on the same
// data (sessions are kept in the snapshot and survive if they do not time out meanwhile).
const SESSION_TIMEOUT_MS = 1_500;
let server: ZookeeperServer;

describeFaultSuite({
  name: 'zookeeper',
  fenced: true,
  async start() {
    server = await ZookeeperServer.start();
    return {
      name: 'zookeeper',
      workerConfig: () => ({
        type: 'zookeeper',
        url: server.connectionString,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        connectTimeoutMs: 2_000,
        rootPath: `/ndl-faults-${randomUUID().slice(0, 8)}`,
      }),
      leaseMs: 1_000,
      // The server expires a session on its next tick after the timeout.
      lossMs: SESSION_TIMEOUT_MS + 2 * ZOOKEEPER_TICK_MS + 600,
      restartStore: () => server.restart(),
      freezeStore: () => server.pause(),
      thawStore: () => server.resume(),
    };
  },
  stop: async () => server?.destroy(),
});
