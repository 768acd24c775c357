/** A held lock. Obtained from `LockService.acquire`, `withLock`, `current()` or inside a `@Locked` method. */
export interface Lock {
  /** The key as the caller gave it, without the prefix. On a {@link MultiLock}: its `keys` joined with `,` (a label; use `keys`). */
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
  /** Releases the lock at the end of an `await using` block. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A lock on several keys at once, from `acquire([...])`, `withLock([...])` or a `@Locked()` method
 * with a key list. Its parts are single locks taken in canonical (sorted) order; it is held only
 * while every part is.
 */
export interface MultiLock extends Lock {
  /** The distinct keys, in the canonical order they were taken (sorted), without the prefix. `key` is these joined with `,`. */
  readonly keys: readonly string[];
  /** The fence of each part, by key. The multi-lock's own `fence` is `undefined`. */
  readonly fences: Readonly<Record<string, number | undefined>>;
}

/** Whether `lock` is a lock on several keys (a {@link MultiLock}), e.g. to read its `fences` from `current()`. */
export function isMultiLock(lock: Lock | null | undefined): lock is MultiLock {
  return lock != null && Array.isArray((lock as Partial<MultiLock>).keys);
}

/** Per-call options of `acquire`, `tryAcquire` and `withLock`. Unset fields take the module's defaults. */
export interface LockOptions {
  /** Lease in ms, renewed every `leaseMs / 3` while held. Default the module's `leaseMs` (30 s). */
  leaseMs?: number;
  /** How long to wait for a busy lock, in ms (`0`: one attempt, `Infinity`: for ever). Default the module's `waitMs` (10 s). */
  waitMs?: number;
  /** `'exclusive'` (default; the same as `'write'`) or `'read'` (shared with other readers). */
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
  /**
   * Says what the holder is doing, for operators (`LockService.inspect`, the CLI, the admin page):
   * stored with the lock next to the instance label. Plain text, cut to about 96 characters.
   */
  label?: string;
  /**
   * Hold at least: when the holder releases earlier, the key stays taken until `minHoldMs` after the
   * acquisition (counted in the store, which keeps the remainder as an expiry), then frees by itself,
   * even if this process has exited. For jobs that must run once per tick across instances whose
   * schedules fire a little apart. Exclusive locks only; a store that cannot keep it refuses it with
   * InvalidLockArgumentError (ZooKeeper). Applies to the outermost holder; a re-entrant call shares its lock.
   */
  minHoldMs?: number;
  /**
   * Hold at most: renewal stops `maxHoldMs` after the acquisition; `signal` aborts with
   * `LockLostError` (saying so) and the key frees when its current lease lapses, so a hung holder
   * cannot keep the key for longer than `maxHoldMs` plus one lease.
   */
  maxHoldMs?: number;
}
