import { PostgresServer } from '../harness/postgres-server.js';
import { signalTree } from '../faults/process-tree.js';
import { describeLeaderSuite } from './leader-suite.js';

// PostgreSQL 15: "restart" is a fast shutdown and start on the same data; "freeze" stops the
// postmaster and every backend process with SIGSTOP.
let server: PostgresServer;

describeLeaderSuite({
  name: 'postgres',
  async start() {
    server = await PostgresServer.start();
    return {
      name: 'postgres',
      backend: () => ({ type: 'postgres', url: server.connectionString }),
      leaseMs: 2_000,
      lossMs: 2_600,
      restartStore: () => server.restart(),
      freezeStore: () => signalTree(server.pid, 'SIGSTOP'),
      thawStore: () => signalTree(server.pid, 'SIGCONT'),
    };
  },
  stop: async () => server?.destroy(),
});
