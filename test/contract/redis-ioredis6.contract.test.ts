// The Redis contract suite on clients of ioredis 6 (the `ioredis6` devDependency alias), passed as `client`:
// the package's peer range is `^5 || ^6`, and the other Redis suites run on ioredis 5.
import { describe } from '@jest/globals';
import { Redis } from 'ioredis6';
import { createLockBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { redisSemaphoreKeys } from '../../lib/backends/redis/semaphore-keys.js';
import { RedisServer } from '../harness/redis-server.js';
import { describeBackendContract } from './backend-contract.js';
import { describeHoldBoundsContract } from './hold-bounds-contract.js';
import type { ContractTarget } from './contract-target.js';
import { describeReadWriteContract } from './read-write-contract.js';
import { describeInspectionContract } from './inspection-contract.js';
import { describeSemaphoreContract } from './semaphore-contract.js';

let server: RedisServer;
let admin: Redis;
/** The clients handed to backends: borrowed, so the backends leave them open and the suite closes them. */
const clients: Redis[] = [];

const target: ContractTarget = {
  name: 'redis',
  fences: true,
  readWrite: true,
  async start() {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  },
  async stop() {
    for (const client of clients.splice(0)) client.disconnect();
    admin?.disconnect();
    await server?.stop();
  },
  createBackend: (): Promise<LockBackend> => {
    const client = new Redis(server.url);
    clients.push(client);
    return createLockBackend({ type: 'redis', client });
  },
  async expireLock(storeKey) {
    await admin.del(redisLockKeys(storeKey).lock);
  },
  async expireSemaphore(storeKey) {
    await admin.del(redisSemaphoreKeys(storeKey).permits);
  },
  crashFreeMs: (leaseMs) => leaseMs,
};

describe('ioredis 6 clients', () => {
  describeBackendContract(target);
  describeReadWriteContract(target);
  describeSemaphoreContract(target);
  describeInspectionContract(target, {
    leases: true,
    holderFence: true,
    waiters: true,
    semaphores: { permits: false },
  });
  describeHoldBoundsContract(target);
});
