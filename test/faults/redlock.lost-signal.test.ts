import { RedisMasters } from '../harness/redis-masters.js';
import { describeLostSignal } from './lost-signal-suite.js';

describeLostSignal('redlock', async () => {
  const masters = await RedisMasters.start(3);
  return {
    ports: masters.servers.map((server) => server.port),
    config: (addresses) => ({ type: 'redlock', urls: addresses.map((address) => `redis://${address}`) }),
    stop: () => masters.stop(),
  };
});
