import { describeCoreContract } from './backend-contract.js';
import type { ContractTestRunner } from './contract-runner.js';
import type { LockBackendContractTarget } from './contract-target.js';
import { describeHoldBoundsContract } from './hold-bounds-contract.js';
import { describeInspectionContract, type InspectionAbilities } from './inspection-contract.js';
import { describeReadWriteContract } from './read-write-contract.js';
import { describeSemaphoreContract } from './semaphore-contract.js';

/** The store under test, and which of the optional suites it takes part in. */
export interface LockBackendContractOptions extends LockBackendContractTarget {
  /** The store implements counting semaphores (capability `semaphore`): run the semaphore tests. */
  readonly semaphores?: boolean;
  /** The store implements `LockBackend.inspection`: run the inspection tests, expecting what it reports. */
  readonly inspection?: InspectionAbilities;
  /** The store queues read/write waiters: run the tests of arrival order and of a waiting writer not starved by readers. */
  readonly readWriteOrder?: boolean;
}

/**
 * Registers, with your test runner, the tests every lock store must pass: exclusion, waiting and
 * hand-off, ownership, re-entrancy, leases and loss, fences, read/write modes, multi-key locks,
 * bad input, events and shutdown, `minHoldMs`/`maxHoldMs`; and, as `target` says, semaphores,
 * inspection and read/write ordering. Two engines over two backends from `target.createBackend()`
 * stand for two app instances. Assertions use `node:assert`, so it runs under jest, vitest and
 * `node:test` alike (see {@link ContractTestRunner}). The built-in stores are verified with it.
 *
 * ```ts
 * import { describe, it, beforeAll, afterAll } from 'vitest';
 * import { describeLockBackendContract } from 'nestjs-distributed-lock/backend';
 *
 * describeLockBackendContract('my-store', {
 *   createBackend: async () => new MyStoreBackend(process.env.MY_STORE_URL),
 *   fences: true,
 *   readWrite: false,
 * }, { describe, it, beforeAll, afterAll });
 * ```
 */
export function describeLockBackendContract(
  name: string,
  target: LockBackendContractOptions,
  runner: ContractTestRunner,
): void {
  describeCoreContract(name, target, runner);
  describeHoldBoundsContract(name, target, runner);
  if (target.semaphores) describeSemaphoreContract(name, target, runner);
  if (target.inspection) describeInspectionContract(name, target, runner, target.inspection);
  if (target.readWriteOrder) describeReadWriteContract(name, target, runner);
}
