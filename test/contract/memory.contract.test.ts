import { MemoryBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { describeBackendContract } from './backend-contract.js';
import { describeHoldBoundsContract } from './hold-bounds-contract.js';
import type { ContractTarget } from './contract-target.js';
import { describeInspectionContract } from './inspection-contract.js';
import { describeSemaphoreContract } from './semaphore-contract.js';

// One store shared by every engine of the test, as one process's instances would share it.
let store = new MemoryBackend();

const target: ContractTarget = {
  name: 'memory',
  fences: true,
  readWrite: true,
  async start() {
    store = new MemoryBackend();
  },
  async stop() {},
  async createBackend(): Promise<LockBackend> {
    // Engines close their backend on shutdown; the shared store must outlive them.
    return {
      name: 'memory',
      capabilities: store.capabilities,
      inspection: store.inspection,
      claim: (request) => store.claim(request),
      close: async () => undefined,
    };
  },
  async expireLock(storeKey) {
    store.expire(storeKey);
  },
  async expireSemaphore(storeKey) {
    store.expireSemaphore(storeKey);
  },
  crashFreeMs: (leaseMs) => leaseMs,
};

describeBackendContract(target);
describeSemaphoreContract(target);
describeInspectionContract(target, { leases: true, holderFence: true, waiters: true, semaphores: { permits: true } });
describeHoldBoundsContract(target);
