import { describeLockBackendContract } from '../../lib/backend.js';
import { startChildHolder } from '../support/child-holder.js';
import { jestRunner } from './contract-suite.js';
import type { ContractTarget } from './contract-target.js';

/**
 * The shipped contract suite (lib/testing/backend-contract.ts) under jest, for a built-in store;
 * a store with a `processConfig` also gets the crashed-holder test, its holder a child process.
 */
export function describeBackendContract(target: ContractTarget): void {
  const { processConfig } = target;
  describeLockBackendContract(
    target.name,
    {
      createBackend: () => target.createBackend(),
      start: () => target.start(),
      stop: () => target.stop(),
      fences: target.fences,
      readWrite: target.readWrite,
      crashFreeMs: (leaseMs) => target.crashFreeMs(leaseMs),
      expireLock: target.expireLock && ((storeKey) => target.expireLock!(storeKey)),
      createUnreachableBackend: target.createUnreachableBackend && (() => target.createUnreachableBackend!()),
      startHolderProcess: processConfig && (async ({ key, keyPrefix, leaseMs }) => {
        const holder = await startChildHolder({ backend: processConfig(), key, keyPrefix, leaseMs });
        return { fence: holder.fence, kill: () => holder.kill('SIGKILL') };
      }),
    },
    jestRunner,
  );
}
