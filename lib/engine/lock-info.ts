/** One holder of a lock (or of a semaphore permit), as `LockService.inspect` and `list` report it. */
export interface LockHolder {
  /** The holder's app instance (module option `instance`, default `hostname:pid`). Absent where the store keeps no owner. */
  readonly instance?: string;
  /** The holder's per-call `label`, if it gave one. Plain text: show it escaped. */
  readonly label?: string;
  /** The holder's fence, where the store gives one per holder. */
  readonly fence?: number;
  /** Remaining lease by the store's clock (etcd: its lease's TTL, in whole seconds); absent where liveness is a session (ZooKeeper). */
  readonly expiresInMs?: number;
  /**
   * Epoch ms when the holder's acquisition claimed the key, by the holder instance's clock: kept
   * across renewals and re-entrant calls. For a holder that waited its turn in a queue, when it
   * began waiting. Absent for holders of older versions (and SQL owners stored hashed).
   */
  readonly acquiredAt?: number;
  /** A permit of the key's counting semaphore rather than its lock. */
  readonly permit?: boolean;
}

/** One claim queued for a lock, as `LockService.inspect` and `list` report it. */
export interface LockWaiter {
  /** The waiter's app instance. */
  readonly instance?: string;
  /** The waiter's per-call `label`, if it gave one. Plain text: show it escaped. */
  readonly label?: string;
  /** Epoch ms when it began waiting, by the waiter instance's clock. */
  readonly since?: number;
}

/** What the store says about one key now (`LockService.inspect`, `list`). */
export interface LockInfo {
  /** The key as callers give it, without the module's `keyPrefix`. */
  readonly key: string;
  /** Whether anyone holds the key (a lock holder or a semaphore permit). */
  readonly held: boolean;
  /** `'read'` when readers share it, `'exclusive'` for an exclusive or write holder. */
  readonly mode?: 'exclusive' | 'read';
  /** Who holds it: one entry for an exclusive lock, one per reader or permit. */
  readonly holders: readonly LockHolder[];
  /** Claims queued for it, where the store keeps a queue (memory, Redis queues, ZooKeeper, etcd). */
  readonly waiting?: number;
  /**
   * Who waits, in queue order (the next to be served first; at most the first 100), where the store
   * keeps a queue: memory, ZooKeeper, etcd, and Redis's queued (fair and read/write) claims. Absent
   * where it keeps none (plain Redis waiters, SQL, Redlock): `waiting` is then all it can tell.
   */
  readonly waiters?: readonly LockWaiter[];
  /** Its counting semaphore, when permits are taken (`permits` where the store keeps the number). */
  readonly semaphore?: { readonly used: number; readonly permits?: number };
}

/** `LockService.list` options. */
export interface ListLocksOptions {
  /** Only keys starting with this (without the module's `keyPrefix`). Default: all. */
  prefix?: string;
  /** Most locks in one page, 1 to 1000. Default 100. */
  limit?: number;
  /** The `cursor` of the previous page. */
  cursor?: string;
}

/** One page of `LockService.list`; `cursor` is absent on the last page. */
export interface LockList {
  /** The locks of this page. */
  readonly locks: readonly LockInfo[];
  /** Pass it to the next `list()` call; absent on the last page. */
  readonly cursor?: string;
}

/** `LockService.forceRelease` options. */
export interface ForceReleaseOptions {
  /** Why, for the `force-released` event (and the logs that follow it). */
  reason?: string;
  /** Who asked (an operator's name, from the admin page's `actor` option), for the `force-released` event. */
  actor?: string;
}
