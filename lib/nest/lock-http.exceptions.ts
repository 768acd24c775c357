import { ConflictException, HttpStatus, ServiceUnavailableException } from '@nestjs/common';
import type { LockBackendError, LockTimeoutError } from '../errors.js';

/**
 * 409 Conflict: the lock stayed busy for `waitMs`. Thrown by `LockedInterceptor` for a
 * `@Locked()` HTTP handler; a user's `@Catch(LockBusyException)` filter can shape the answer.
 * The `LockTimeoutError` is its `cause`.
 */
export class LockBusyException extends ConflictException {
  /** The busy lock's key, as the caller gave it. */
  readonly key: string;
  /** Seconds the client may wait before trying again (the `Retry-After` header), when known. */
  readonly retryAfter: number | undefined;

  constructor(error: LockTimeoutError, retryAfter?: number) {
    const body = { statusCode: HttpStatus.CONFLICT, error: 'Conflict', message: error.message, key: error.key, ...(retryAfter === undefined ? {} : { retryAfter }) };
    super(body, { cause: error });
    this.name = 'LockBusyException';
    this.key = error.key;
    this.retryAfter = retryAfter;
  }
}

/**
 * 503 Service Unavailable: the lock store could not be reached (or lost its quorum), or this
 * instance is shutting down. Thrown by `LockedInterceptor` and the admin controller. The store's
 * own message, which may name hosts, stays out of the body, in `cause`.
 */
export class LockStoreUnavailableException extends ServiceUnavailableException {
  /** Seconds the client may wait before trying again (the `Retry-After` header), when given. */
  readonly retryAfter: number | undefined;

  constructor(error: LockBackendError, retryAfter?: number) {
    super({ statusCode: HttpStatus.SERVICE_UNAVAILABLE, error: 'Service Unavailable', message: 'The lock store is unavailable', ...(retryAfter === undefined ? {} : { retryAfter }) }, { cause: error });
    this.name = 'LockStoreUnavailableException';
    this.retryAfter = retryAfter;
  }
}
