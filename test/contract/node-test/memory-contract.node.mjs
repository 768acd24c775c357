// The shipped contract suite under node:test (no jest), against the built package: run by
// test/contract/node-test-runner.test.ts. CONTRACT_BROKEN=1 runs it against a store that lets
// every claimant in, which the suite must fail.
import { after, before, describe, it } from 'node:test';
import { MemoryBackend } from '../../../dist/esm/index.js';
import { describeLockBackendContract } from '../../../dist/esm/backend.js';

const runner = {
  describe,
  it: (name, fn, timeout) => it(name, { timeout }, fn),
  beforeAll: (fn, timeout) => before(fn, { timeout }),
  afterAll: (fn, timeout) => after(fn, { timeout }),
};

// One store shared by every engine, as one process's instances would share it.
let store = new MemoryBackend();
const broken = process.env.CONTRACT_BROKEN === '1';

function claimOn(request) {
  const claim = store.claim(request);
  if (!broken) return claim;
  return {
    ...claim,
    tryAcquire: async () => ({ acquired: true, fence: 1, validityMs: request.leaseMs }),
    release: claim.release.bind(claim),
    renew: claim.renew.bind(claim),
    waitForChange: claim.waitForChange.bind(claim),
  };
}

describeLockBackendContract(
  'memory',
  {
    start: async () => void (store = new MemoryBackend()),
    // Engines close their backend on shutdown; the shared store must outlive them.
    createBackend: async () => ({
      name: 'memory',
      capabilities: store.capabilities,
      inspection: store.inspection,
      claim: claimOn,
      close: async () => undefined,
    }),
    expireLock: async (storeKey) => store.expire(storeKey),
    expireSemaphore: async (storeKey) => store.expireSemaphore(storeKey),
    fences: true,
    readWrite: true,
    semaphores: true,
    inspection: { leases: true, holderFence: true, waiters: true, semaphores: { permits: true } },
  },
  runner,
);
