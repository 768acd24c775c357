import type { BackendOptions } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';

/** What the contract suite needs to know about one store. One file per store runs the suite with its target. */
export interface ContractTarget {
  readonly name: string;
  /** Starts the servers this store needs (called once, before all tests). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A new backend with its own clients, as a separate app instance would have. */
  createBackend(): Promise<LockBackend>;
  /** Backend options a separate OS process can use; absent for single-process stores (memory). */
  processConfig?(): BackendOptions;
  /** Deletes the lock from the store behind its holder's back (as an operator or a store failure would). */
  expireLock?(storeKey: string): Promise<void>;
  /**
   * Waits until the writes of an acquisition that has returned have all reached the store (redlock:
   * the masters that had not answered yet when the quorum did). Absent: they have when it returns.
   */
  settled?(storeKey: string): Promise<void>;
  /** Deletes every permit of the semaphore `storeKey` behind their holders' back (stores with semaphores). */
  expireSemaphore?(storeKey: string): Promise<void>;
  /** A backend pointed at a store that is not running. */
  createUnreachableBackend?(): Promise<LockBackend>;
  /** Whether this store gives fencing tokens. */
  readonly fences: boolean;
  /** Whether this store supports mode 'read'. */
  readonly readWrite: boolean;
  /** How long after its holder process dies a lock frees, at most, for the lease the suite uses. */
  crashFreeMs(leaseMs: number): number;
}
