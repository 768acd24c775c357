/** Base class of every error this library throws. `name` is the concrete class name. */
export class DistributedLockError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The lock stayed busy for longer than `waitMs` (or was busy on a one-shot attempt). */
export class LockTimeoutError extends DistributedLockError {
  constructor(
    /** The key, as the caller gave it. */
    readonly key: string,
    /** How long the call waited, in ms. */
    readonly waitMs: number,
    /** Milliseconds until the current holder's lease lapses, when the store told us (renewals keep it full while the holder works). */
    readonly retryAfterMs?: number,
    /**
     * This instance's estimate of how long until the key frees, in ms: the median of its last 5 holds
     * of the key, less how long the current hold is known to have lasted (this instance's own hold of
     * it, or how long this call found the key taken at every attempt), and never less than that
     * time. Undefined when this instance has not held the key recently. HTTP `Retry-After` is this,
     * in whole seconds, rounded up, at least 1 (docs/errors.md).
     */
    readonly likelyFreeInMs?: number,
  ) {
    super(`Lock "${key}" is busy: not acquired within ${waitMs} ms`);
  }
}

/** The lock is no longer held: renewal failed, the lease lapsed, or another owner holds it. */
export class LockLostError extends DistributedLockError {
  constructor(
    /** The key, as the caller gave it. */
    readonly key: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`Lock "${key}" was lost: ${reason}`, options);
  }
}

/** The lock store could not be reached or could not answer (no quorum, connection refused, ...). Not the same as busy. */
export class LockBackendError extends DistributedLockError {
  constructor(
    /** The store's name (`'redis'`, `'etcd'`, ...). */
    readonly backend: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`[${backend}] ${message}`, options);
  }
}

/**
 * This instance is shutting down (`app.close()`, `LockEngine.close()`): it takes no new lock. Not a
 * store outage (the store may be fine): another instance can take the lock.
 */
export class LockShuttingDownError extends DistributedLockError {
  constructor(
    /** The store's name (`'redis'`, `'etcd'`, ...). */
    readonly backend: string,
  ) {
    super(`[${backend}] the lock service is shutting down`);
  }
}

/** A key, template, lease, wait or option value is not acceptable. */
export class InvalidLockArgumentError extends DistributedLockError {}

/**
 * A fenced write was refused: the resource has already accepted a higher fence, so the lock this
 * fence came from has since passed to another holder (Kleppmann's fencing tokens). Nothing was written.
 */
export class StaleFenceError extends DistributedLockError {
  constructor(
    /** The guarded resource: a SQL guard's resource name, or the Redis key. */
    readonly resource: string,
    /** The fence the write came with. */
    readonly fence: number,
    /** The highest fence the resource has accepted (or its table's floor, after pruning). */
    readonly highest: number,
    options?: ErrorOptions,
  ) {
    super(
      `Fenced write to "${resource}" refused: fence ${fence} is below ${highest}, the highest the resource has accepted (a newer holder has written since)`,
      options,
    );
  }
}
