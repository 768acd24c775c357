import { RedisServer } from '../harness/redis-server.js';
import { describeTickSuite } from './tick-suite.js';

let server: RedisServer;

describeTickSuite({
  name: 'redis',
  start: async () => void (server = await RedisServer.start()),
  stop: async () => server?.stop(),
  processConfig: () => ({ type: 'redis', url: server.url }),
  minHold: true,
  periodMs: 1_000,
  // The key's TTL is the 2 s lease.
  crashFreeMs: 2_000,
});
