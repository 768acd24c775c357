import type { LockBackend } from '../engine/lock-backend.js';

/** A holder of a lock in another OS process, which the suite kills to see the lock freed. */
export interface ContractHolderProcess {
  /** The fence the holder got (stores with fences). */
  readonly fence?: number;
  /** Kills the process with SIGKILL; resolves once it has exited. */
  kill(): Promise<void>;
}

/** The store under test: how to make backends on it, what it supports, and the hooks the suite uses when present. */
export interface LockBackendContractTarget {
  /** A new backend with its own connections, as a separate app instance would have. The suite closes it. */
  createBackend(): Promise<LockBackend>;
  /** Starts what the store needs, before the suite's first test. */
  start?(): Promise<void>;
  /** Stops it after the suite's last test. */
  stop?(): Promise<void>;
  /** Whether the store gives fencing tokens (strictly increasing per key); if not, the suite checks that it gives none. */
  readonly fences: boolean;
  /** Whether the store supports mode 'read'. Enables the read/write tests. */
  readonly readWrite: boolean;
  /** Deletes the lock at `storeKey` behind its holder's back (as an operator or a store failure would). Enables the ownership and loss tests. */
  expireLock?(storeKey: string): Promise<void>;
  /** Deletes every permit of the semaphore at `storeKey` behind their holders' back. Enables the semaphore loss tests. */
  expireSemaphore?(storeKey: string): Promise<void>;
  /**
   * Waits until the writes of an acquisition that has returned have all reached the store (e.g.
   * Redlock: the masters that had not answered when the quorum did). Absent: they have when it returns.
   */
  settled?(storeKey: string): Promise<void>;
  /** A backend pointed at a store that is not running. Enables the unreachable-store test. */
  createUnreachableBackend?(): Promise<LockBackend>;
  /** Starts another process that acquires `keyPrefix + key` with `leaseMs` and holds it. Enables the crashed-holder test. */
  startHolderProcess?(params: { key: string; keyPrefix: string; leaseMs: number }): Promise<ContractHolderProcess>;
  /** How long after its holder process dies a lock frees, at most, for the lease the suite uses. Default: the lease. */
  crashFreeMs?(leaseMs: number): number;
}
