import { afterAll, beforeAll, describe, it } from '@jest/globals';
import type { LockBackend } from '../../lib/backend.js';
import {
  useContractSuite as useSuite,
  type ContractSuite,
  type EngineSettings,
} from '../../lib/testing/contract-suite.js';
import type { ContractTestRunner } from '../../lib/testing/contract-runner.js';
import type { LockBackendContractTarget } from '../../lib/testing/contract-target.js';
import { startChildHolder } from '../support/child-holder.js';
import type { ContractTarget } from './contract-target.js';

export type { ContractSuite, EngineSettings };

/** jest's functions, as the shipped contract suites take them. */
export const jestRunner: ContractTestRunner = { describe, it, beforeAll, afterAll };

/** The shipped suites' set-up (lib/testing/contract-suite.ts) under jest. */
export function useContractSuite(
  target: ContractTarget,
  name: string,
  defaults: Required<Omit<EngineSettings, 'instance'>>,
  wrap?: (backend: LockBackend) => LockBackend,
): ContractSuite {
  return useSuite(jestRunner, target, name, defaults, wrap);
}

/**
 * A built-in store's target as the shipped suites take it; a store with a `processConfig` also
 * gets the crashed-holder test, its holder a child process running the built package.
 */
export function shippedTarget(target: ContractTarget): LockBackendContractTarget {
  const { processConfig } = target;
  return {
    createBackend: () => target.createBackend(),
    start: () => target.start(),
    stop: () => target.stop(),
    fences: target.fences,
    readWrite: target.readWrite,
    crashFreeMs: (leaseMs) => target.crashFreeMs(leaseMs),
    expireLock: target.expireLock && ((storeKey) => target.expireLock!(storeKey)),
    expireSemaphore: target.expireSemaphore && ((storeKey) => target.expireSemaphore!(storeKey)),
    settled: target.settled && ((storeKey) => target.settled!(storeKey)),
    createUnreachableBackend: target.createUnreachableBackend && (() => target.createUnreachableBackend!()),
    startHolderProcess:
      processConfig &&
      (async ({ key, keyPrefix, leaseMs }) => {
        const holder = await startChildHolder({ backend: processConfig(), key, keyPrefix, leaseMs });
        return { fence: holder.fence, kill: () => holder.kill('SIGKILL') };
      }),
  };
}
