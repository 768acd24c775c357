import { Redis } from 'ioredis';
import { RedisServer } from '../harness/redis-server.js';
import { describeFootprint } from './footprint-runner.js';

/** Fence counters, readers, queues and permits of a released key go this long after its lease. */
const IDLE_MS = 500;

let server: RedisServer;
let admin: Redis;

describeFootprint({
  name: 'redis',
  kinds: ['plain', 'read', 'fair', 'semaphore'],
  async start() {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  },
  async stop() {
    admin?.disconnect();
    await server?.stop();
  },
  options: () => ({ type: 'redis', url: server.url, idleKeyTtlMs: IDLE_MS }),
  count: () => admin.dbsize(),
  keepsUntilIdle: true,
  // Lease (5 s) + idle time, then Redis's active expiry (which goes on while a quarter of its sample is expired).
  settleMs: 30_000,
});
