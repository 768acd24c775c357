import { ConflictException, HttpStatus, ServiceUnavailableException } from '@nestjs/common';
import type { LockBackendError, LockLostError, LockShuttingDownError, LockTimeoutError } from '../../errors.js';
import { LockErrorCode } from './lock-error-codes.js';

/**
 * `Retry-After` of a 503: a store failover or a restarting instance behind a load balancer is
 * usually over within seconds, and a second keeps clients from retrying in a tight loop.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** Response headers as the library's own filter sets them: `{ 'Retry-After': '3' }`. */
export type LockAnswerHeaders = Readonly<Record<string, string>>;

/**
 * 409 Conflict: the lock stayed busy for `waitMs`. Thrown for a `@Locked()` HTTP handler, and for a
 * `LockTimeoutError` thrown anywhere in a request; a user's `@Catch(LockBusyException)` filter can
 * shape the answer. The `LockTimeoutError` is its `cause`.
 */
export class LockBusyException extends ConflictException {
  /** The busy lock's key, as the caller gave it. */
  readonly key: string;
  /** Seconds the client may wait before trying again (the `Retry-After` header), when known. */
  readonly retryAfter: number | undefined;
  /** What the library's filter sets on the response: `Retry-After` when known. A filter of yours answering this exception sets them itself. */
  readonly headers: LockAnswerHeaders;

  constructor(error: LockTimeoutError, retryAfter?: number) {
    const body = {
      statusCode: HttpStatus.CONFLICT,
      error: 'Conflict',
      message: error.message,
      key: error.key,
      ...(retryAfter === undefined ? {} : { retryAfter }),
    };
    super(body, { cause: error });
    this.name = 'LockBusyException';
    this.key = error.key;
    this.retryAfter = retryAfter;
    this.headers = retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
  }
}

/**
 * 503 Service Unavailable: the lock store could not be reached (or lost its quorum). Thrown for
 * `@Locked()` handlers and by the admin controller. The store's own message, which may name hosts,
 * stays out of the body, in `cause`.
 */
export class LockStoreUnavailableException extends ServiceUnavailableException {
  /** Seconds the client may wait before trying again (the `Retry-After` header), when given. */
  readonly retryAfter: number | undefined;
  /** What the library's filter sets on the response: `Retry-After`. */
  readonly headers: LockAnswerHeaders;

  constructor(error: LockBackendError, retryAfter?: number) {
    super(
      {
        statusCode: HttpStatus.SERVICE_UNAVAILABLE,
        error: 'Service Unavailable',
        message: 'The lock store is unavailable',
        ...(retryAfter === undefined ? {} : { retryAfter }),
      },
      { cause: error },
    );
    this.name = 'LockStoreUnavailableException';
    this.retryAfter = retryAfter;
    this.headers = retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
  }
}

/**
 * 503 Service Unavailable, code `LOCK_SHUTTING_DOWN`: this instance is shutting down and takes no
 * new lock; another instance can. Not a store outage. Sent with `Retry-After` and `Connection:
 * close`, so the client's next request opens a connection, which a load balancer sends elsewhere.
 */
export class LockShuttingDownException extends ServiceUnavailableException {
  /** Seconds the client may wait before trying again (the `Retry-After` header). */
  readonly retryAfter: number;
  /** What the library's filter sets on the response: `Retry-After` and `Connection: close`. */
  readonly headers: LockAnswerHeaders;

  constructor(error: LockShuttingDownError, retryAfter = UNAVAILABLE_RETRY_AFTER_SECONDS) {
    super(
      {
        statusCode: HttpStatus.SERVICE_UNAVAILABLE,
        error: 'Service Unavailable',
        message: 'This instance is shutting down',
        code: LockErrorCode.shuttingDown,
        retryAfter,
      },
      { cause: error },
    );
    this.name = 'LockShuttingDownException';
    this.retryAfter = retryAfter;
    this.headers = { 'Retry-After': String(retryAfter), Connection: 'close' };
  }
}

/**
 * 409 Conflict, code `LOCK_LOST`: the request's lock was lost (its holder paused past its lease,
 * or it was force-released) and the work it guarded was refused (a fence guard, or
 * `lock.signal.throwIfAborted()`): as retryable as a stale fence. The `LockLostError` is its
 * `cause`; its reason (which may name hosts) stays out of the body.
 */
export class LockLostException extends ConflictException {
  /** The lost lock's key, as the caller gave it. */
  readonly key: string;
  /** Nothing to set: a retry can come at once. */
  readonly headers: LockAnswerHeaders = {};

  constructor(error: LockLostError) {
    super(
      {
        statusCode: HttpStatus.CONFLICT,
        error: 'Conflict',
        message: lostMessage(error.key),
        code: LockErrorCode.lost,
        key: error.key,
      },
      { cause: error },
    );
    this.name = 'LockLostException';
    this.key = error.key;
  }
}

/** What a client reads of a lost lock: its key, not the reason (which may name hosts). */
export const lostMessage = (key: string): string =>
  `Lock "${key}" was lost while the request held it; the work it guarded was refused`;
