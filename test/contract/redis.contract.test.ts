import { Redis } from 'ioredis';
import { createLockBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { redisSemaphoreKeys } from '../../lib/backends/redis/semaphore-keys.js';
import { freePort } from '../harness/free-port.js';
import { RedisServer } from '../harness/redis-server.js';
import { describeBackendContract } from './backend-contract.js';
import { describeHoldBoundsContract } from './hold-bounds-contract.js';
import type { ContractTarget } from './contract-target.js';
import { describeReadWriteContract } from './read-write-contract.js';
import { describeInspectionContract } from './inspection-contract.js';
import { describeSemaphoreContract } from './semaphore-contract.js';

let server: RedisServer;
let admin: Redis;

const target: ContractTarget = {
  name: 'redis',
  fences: true,
  readWrite: true,
  async start() {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  },
  async stop() {
    admin?.disconnect();
    await server?.stop();
  },
  createBackend: (): Promise<LockBackend> => createLockBackend({ type: 'redis', url: server.url }),
  processConfig: () => ({ type: 'redis', url: server.url }),
  async expireLock(storeKey) {
    await admin.del(redisLockKeys(storeKey).lock);
  },
  async expireSemaphore(storeKey) {
    await admin.del(redisSemaphoreKeys(storeKey).permits);
  },
  // A port that was free a moment ago: nothing listens there.
  createUnreachableBackend: async () =>
    createLockBackend({ type: 'redis', url: `redis://127.0.0.1:${await freePort()}` }),
  crashFreeMs: (leaseMs) => leaseMs,
};

describeBackendContract(target);
describeReadWriteContract(target);
describeSemaphoreContract(target);
describeInspectionContract(target, { leases: true, holderFence: true, waiters: true, semaphores: { permits: false } });
describeHoldBoundsContract(target);
