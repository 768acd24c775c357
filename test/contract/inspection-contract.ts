import {
  describeInspectionContract as describeShipped,
  type InspectionAbilities,
} from '../../lib/testing/inspection-contract.js';
import { jestRunner, shippedTarget } from './contract-suite.js';
import type { ContractTarget } from './contract-target.js';

export type { InspectionAbilities };

/** The shipped suite (lib/testing/inspection-contract.ts) under jest, for a built-in store. */
export function describeInspectionContract(target: ContractTarget, can: InspectionAbilities): void {
  describeShipped(target.name, shippedTarget(target), jestRunner, can);
}
