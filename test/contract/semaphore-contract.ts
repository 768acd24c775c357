import { describeSemaphoreContract as describeShipped } from '../../lib/testing/semaphore-contract.js';
import { jestRunner, shippedTarget } from './contract-suite.js';
import type { ContractTarget } from './contract-target.js';

/** The shipped suite (lib/testing/semaphore-contract.ts) under jest, for a built-in store. */
export function describeSemaphoreContract(target: ContractTarget): void {
  describeShipped(target.name, shippedTarget(target), jestRunner);
}
