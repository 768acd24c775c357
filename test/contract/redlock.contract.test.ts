import { createLockBackend, type RedlockBackendOptions } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { freePort } from '../harness/free-port.js';
import { waitUntil } from '../harness/server-process.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { describeBackendContract } from './backend-contract.js';
import type { ContractTarget } from './contract-target.js';
import { describeInspectionContract } from './inspection-contract.js';
import { describeHoldBoundsContract } from './hold-bounds-contract.js';

let masters: RedisMasters;

const options = (): RedlockBackendOptions => ({ type: 'redlock', urls: masters.urls });

const target: ContractTarget = {
  name: 'redlock',
  // Redlock has no honest fencing token without consensus: see docs/backends/redlock.md.
  fences: false,
  readWrite: false,
  async start() {
    masters = await RedisMasters.start(5);
  },
  async stop() {
    await masters?.stop();
  },
  createBackend: (): Promise<LockBackend> => createLockBackend(options()),
  processConfig: options,
  async expireLock(storeKey) {
    await masters.deleteEverywhere(redisLockKeys(storeKey).lock);
  },
  async settled(storeKey) {
    const lockKey = redisLockKeys(storeKey).lock;
    const all = masters.servers.length;
    await waitUntil(
      `${lockKey} on all ${all} masters`,
      async () => (await masters.countHolding(lockKey)) === all,
      5_000,
      5,
    );
  },
  // Five ports that were free a moment ago: nothing listens there.
  async createUnreachableBackend() {
    const urls = await Promise.all(Array.from({ length: 5 }, async () => `redis://127.0.0.1:${await freePort()}`));
    return createLockBackend({ type: 'redlock', urls });
  },
  // The keys lapse after the lease; the waiter's bound is the holders' remaining lease plus a jittered back-off.
  crashFreeMs: (leaseMs) => leaseMs + 500,
};

describeBackendContract(target);
describeInspectionContract(target, { leases: true, holderFence: false, waiters: false, semaphores: false });
describeHoldBoundsContract(target);
