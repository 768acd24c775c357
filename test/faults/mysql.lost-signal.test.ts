import { MariadbServer } from '../harness/mariadb-server.js';
import { describeLostSignal } from './lost-signal-suite.js';

describeLostSignal('mysql', async () => {
  const server = await MariadbServer.start();
  return {
    ports: [server.port],
    config: ([address]) => ({ type: 'mysql', url: server.uri.replace(`127.0.0.1:${server.port}`, address) }),
    stop: () => server.destroy(),
  };
});
