import { PostgresServer } from '../harness/postgres-server.js';
import { describeFaultSuite } from './fault-suite.js';
import { signalTree } from './process-tree.js';

// PostgreSQL 15: "restart store" is a fast shutdown and start on the same data; "freeze store"
// stops the postmaster and every backend process with SIGSTOP.
let server: PostgresServer;

describeFaultSuite({
  name: 'postgres',
  fenced: true,
  async start() {
    server = await PostgresServer.start();
    return {
      name: 'postgres',
      workerConfig: () => ({ type: 'postgres', url: server.connectionString }),
      leaseMs: 1_000,
      lossMs: 1_600,
      restartStore: () => server.restart(),
      freezeStore: () => signalTree(server.pid, 'SIGSTOP'),
      thawStore: () => signalTree(server.pid, 'SIGCONT'),
    };
  },
  stop: async () => server?.destroy(),
});
