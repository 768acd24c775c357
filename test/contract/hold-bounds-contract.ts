import { describeHoldBoundsContract as describeShipped } from '../../lib/testing/hold-bounds-contract.js';
import { jestRunner, shippedTarget } from './contract-suite.js';
import type { ContractTarget } from './contract-target.js';

/** The shipped suite (lib/testing/hold-bounds-contract.ts) under jest, for a built-in store. */
export function describeHoldBoundsContract(target: ContractTarget): void {
  describeShipped(target.name, shippedTarget(target), jestRunner);
}
