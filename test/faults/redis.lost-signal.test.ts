import { RedisServer } from '../harness/redis-server.js';
import { describeLostSignal } from './lost-signal-suite.js';

describeLostSignal('redis', async () => {
  const server = await RedisServer.start();
  return {
    ports: [server.port],
    config: ([address]) => ({ type: 'redis', url: `redis://${address}` }),
    stop: () => server.stop(),
  };
});
