import { describe } from '@jest/globals';
import { Redis } from 'ioredis';
import { createLockBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { redisSemaphoreKeys } from '../../lib/backends/redis/semaphore-keys.js';
import { RedisServer } from '../harness/redis-server.js';
import { describeBackendContract } from './backend-contract.js';
import type { ContractTarget } from './contract-target.js';
import { describeReadWriteContract } from './read-write-contract.js';
import { describeSemaphoreContract } from './semaphore-contract.js';

// The whole contract again with every acquisition and renewal acknowledged by a replica (WAIT).
let master: RedisServer;
let replica: RedisServer;
let admin: Redis;
const replicas = { min: 1, timeoutMs: 2_000 };

const target: ContractTarget = {
  name: 'redis',
  fences: true,
  readWrite: true,
  async start() {
    master = await RedisServer.start();
    replica = await RedisServer.startReplica(master);
    admin = new Redis(master.url);
  },
  async stop() {
    admin?.disconnect();
    await replica?.stop();
    await master?.stop();
  },
  createBackend: (): Promise<LockBackend> => createLockBackend({ type: 'redis', url: master.url, replicas }),
  processConfig: () => ({ type: 'redis', url: master.url, replicas }),
  async expireLock(storeKey) {
    await admin.del(redisLockKeys(storeKey).lock);
  },
  async expireSemaphore(storeKey) {
    await admin.del(redisSemaphoreKeys(storeKey).permits);
  },
  crashFreeMs: (leaseMs) => leaseMs,
};

describe('replicas: { min: 1 } (master + 1 replica)', () => {
  describeBackendContract(target);
  describeReadWriteContract(target);
  describeSemaphoreContract(target);
});
