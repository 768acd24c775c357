import { PostgresServer } from '../harness/postgres-server.js';
import { describeLostSignal } from './lost-signal-suite.js';

describeLostSignal('postgres', async () => {
  const server = await PostgresServer.start();
  return {
    ports: [server.port],
    config: ([address]) => ({ type: 'postgres', url: `postgres://postgres@${address}/postgres` }),
    stop: () => server.destroy(),
  };
});
