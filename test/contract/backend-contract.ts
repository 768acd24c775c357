import { describeCoreContract } from '../../lib/testing/backend-contract.js';
import { jestRunner, shippedTarget } from './contract-suite.js';
import type { ContractTarget } from './contract-target.js';

/** The shipped backend contract (lib/testing/backend-contract.ts) under jest, for a built-in store. */
export function describeBackendContract(target: ContractTarget): void {
  describeCoreContract(target.name, shippedTarget(target), jestRunner);
}
