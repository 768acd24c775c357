import { describeBackendContract } from './backend-contract.js';
import { describeInspectionContract } from './inspection-contract.js';
import { describeHoldBoundsContract } from './hold-bounds-contract.js';
import type { ContractTarget } from './contract-target.js';
import { describeReadWriteContract } from './read-write-contract.js';
import { describeSemaphoreContract } from './semaphore-contract.js';
import { SemaphoreKeys } from '../../lib/backends/etcd/etcd-keys.js';
import { DEFAULT_LEASE_TTL_MS } from '../../lib/backends/etcd/etcd-options.js';
import { CHILD_LEASE_TTL_SECONDS, EtcdFixture } from '../etcd/etcd-target.js';

// A real etcd 3.4 started by the test (test/harness/etcd-server.ts).
const etcd = new EtcdFixture();

const target: ContractTarget = {
  name: 'etcd',
  fences: true,
  readWrite: true,
  start: () => etcd.start(),
  stop: () => etcd.stop(),
  createBackend: () => etcd.backend(),
  processConfig: () => etcd.options(CHILD_LEASE_TTL_SECONDS),
  expireLock: (storeKey) => etcd.deleteLock(storeKey),
  expireSemaphore: async (storeKey) => void (await etcd.client.delete().prefix(new SemaphoreKeys(storeKey).prefix)),
  createUnreachableBackend: () => etcd.unreachableBackend(),
  // The lease TTL, plus etcd's expiry sweep (every 500 ms) and margin for a busy machine.
  crashFreeMs: () => CHILD_LEASE_TTL_SECONDS * 1000 + 1_500,
};

describeBackendContract(target);
// Remaining lease: the backend's etcd lease (default TTL), which keepalives hold near its full TTL.
describeInspectionContract(target, {
  leases: true,
  leaseMaxMs: DEFAULT_LEASE_TTL_MS,
  holderFence: true,
  waiters: true,
  semaphores: { permits: false },
});
describeReadWriteContract(target);
describeSemaphoreContract(target);
describeHoldBoundsContract(target);
