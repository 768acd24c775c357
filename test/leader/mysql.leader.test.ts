import { MariadbServer } from '../harness/mariadb-server.js';
import { describeLeaderSuite } from './leader-suite.js';

// MariaDB 10.11 through the mysql backend: "restart" is a clean shutdown and start on the same
// data; "freeze" is SIGSTOP of mariadbd.
let server: MariadbServer;

describeLeaderSuite({
  name: 'mysql',
  async start() {
    server = await MariadbServer.start();
    return {
      name: 'mysql',
      backend: () => ({ type: 'mysql', url: server.uri }),
      leaseMs: 2_000,
      lossMs: 2_600,
      restartStore: () => server.restart(),
      freezeStore: () => server.pause(),
      thawStore: () => server.resume(),
    };
  },
  stop: async () => server?.destroy(),
});
