import { MariadbServer } from '../harness/mariadb-server.js';
import { describeFaultSuite } from './fault-suite.js';

// MariaDB 10.11 through the mysql backend: "restart store" is a clean shutdown and start on the
// same data; "freeze store" is SIGSTOP of mariadbd (one process, threads inside).
let server: MariadbServer;

describeFaultSuite({
  name: 'mysql',
  fenced: true,
  async start() {
    server = await MariadbServer.start();
    return {
      name: 'mysql',
      workerConfig: () => ({ type: 'mysql', url: server.uri }),
      leaseMs: 1_000,
      lossMs: 1_600,
      restartStore: () => server.restart(),
      freezeStore: () => server.pause(),
      thawStore: () => server.resume(),
    };
  },
  stop: async () => server?.destroy(),
});
