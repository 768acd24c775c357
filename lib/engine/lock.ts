/** A held lock. Obtained from `LockService.acquire`, `withLock`, `current()` or inside a `@Locked` method. */
export interface Lock {
  /** The key as the caller gave it, without the prefix. */
  readonly key: string;
  /** Strictly increasing per key over successive holders; `undefined` where the backend cannot give one honestly. */
  readonly fence: number | undefined;
  /** Aborted when the lock is lost (reason: `LockLostError`) or released. */
  readonly signal: AbortSignal;
  /** Epoch ms by which the lease lapses unless renewed. */
  readonly expiresAt: number;
  /** Frees the lock. A no-op when already released; rejects with `LockLostError` when the lock was lost. */
  release(): Promise<void>;
  /** Renews the lease now, for `leaseMs` (default: the lease it was acquired with) from now. */
  extend(leaseMs?: number): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Per-call options of `acquire`, `tryAcquire` and `withLock`. Unset fields take the module's defaults. */
export interface LockOptions {
  leaseMs?: number;
  waitMs?: number;
  mode?: import('./lock-mode.js').LockMode;
  /**
   * Makes the key a counting semaphore with this many permits: the call takes one permit, and at
   * most `permits` holders share the key at once. Every caller of one key must give the same number.
   * A key's semaphore is apart from its lock. See `LockService.semaphore`.
   */
  permits?: number;
  /** Hand the lock to waiters in arrival order (FIFO). Redis implements it; memory, ZooKeeper and etcd are always FIFO. */
  fair?: boolean;
  /** Stops waiting when aborted (the call rejects with the signal's reason). */
  signal?: AbortSignal;
}
