import { describeReadWriteContract as describeShipped } from '../../lib/testing/read-write-contract.js';
import { jestRunner, shippedTarget } from './contract-suite.js';
import type { ContractTarget } from './contract-target.js';

/** The shipped suite (lib/testing/read-write-contract.ts) under jest, for a built-in store. */
export function describeReadWriteContract(target: ContractTarget): void {
  describeShipped(target.name, shippedTarget(target), jestRunner);
}
