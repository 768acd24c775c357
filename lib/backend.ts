/**
 * The contract between the lock engine and a store, for writing a store of your own: implement
 * `LockBackend`, pass it as the module's `backend` (or to `new LockEngine(...)`), and verify it with
 * `describeLockBackendContract` under your test runner, as the built-in stores are verified.
 * @packageDocumentation
 */
export type {
  LockBackend,
  LockClaim,
  ClaimRequest,
  AttemptResult,
  Acquired,
  Busy,
  BackendCapabilities,
} from './engine/lock-backend.js';
export type {
  LockInspection,
  StoredHolder,
  StoredWaiter,
  StoredLockState,
  ListRequest,
  ListPage,
} from './engine/lock-inspection.js';
export type { LockMode } from './engine/lock-mode.js';
export { describeLockBackendContract, type LockBackendContractOptions } from './testing/lock-backend-contract.js';
export type { InspectionAbilities } from './testing/inspection-contract.js';
export type { ContractTestRunner } from './testing/contract-runner.js';
export type { LockBackendContractTarget, ContractHolderProcess } from './testing/contract-target.js';
