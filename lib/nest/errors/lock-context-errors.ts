import * as common from '@nestjs/common';
import {
  LockBackendError,
  LockLostError,
  LockShuttingDownError,
  LockTimeoutError,
  StaleFenceError,
} from '../../errors.js';
import { LockErrorCode } from './lock-error-codes.js';
import { lostMessage } from './lock-http-exceptions.js';

/** What a microservice or WebSocket client receives for a lock error, and a GraphQL error's `extensions`. */
export interface LockErrorPayload {
  /** Always `'error'` (Nest's microservice error shape). */
  readonly status: 'error';
  /** `'LOCK_BUSY'`, `'LOCK_STORE_UNAVAILABLE'`, `'LOCK_STALE_FENCE'`, `'LOCK_LOST'` or `'LOCK_SHUTTING_DOWN'`. */
  readonly code: LockErrorCode;
  /** A message for people; the store's own message is never in it. */
  readonly message: string;
  /** The busy or lost lock's key. */
  readonly key?: string;
  /** How long the holder's lease has left, when the store said. */
  readonly retryAfterMs?: number;
  /** A stale fence: the guarded resource. */
  readonly resource?: string;
  /** A stale fence: the fence the write came with. */
  readonly fence?: number;
  /** A stale fence: the highest fence the resource has accepted. */
  readonly highest?: number;
}

/** The lock errors answered in each context's own terms. */
export type MappedLockError =
  LockTimeoutError | LockBackendError | StaleFenceError | LockLostError | LockShuttingDownError;

/** A lock error the library answers (a busy lock, an unreachable store, a stale fence, a lost lock, a refusal while shutting down). */
export function isMappedLockError(error: unknown): error is MappedLockError {
  return (
    error instanceof LockTimeoutError ||
    error instanceof LockBackendError ||
    error instanceof StaleFenceError ||
    error instanceof LockLostError ||
    error instanceof LockShuttingDownError
  );
}

/** The payload of a lock error; the store's own message (which may name hosts) is kept out of it. */
export function lockErrorPayload(error: MappedLockError): LockErrorPayload {
  if (error instanceof LockTimeoutError) {
    const retryAfterMs =
      error.retryAfterMs !== undefined && Number.isFinite(error.retryAfterMs)
        ? Math.max(0, Math.ceil(error.retryAfterMs))
        : undefined;
    return {
      status: 'error',
      code: LockErrorCode.busy,
      message: error.message,
      key: error.key,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  if (error instanceof StaleFenceError) {
    return {
      status: 'error',
      code: LockErrorCode.staleFence,
      message: error.message,
      resource: error.resource,
      fence: error.fence,
      highest: error.highest,
    };
  }
  if (error instanceof LockLostError)
    return { status: 'error', code: LockErrorCode.lost, message: lostMessage(error.key), key: error.key };
  if (error instanceof LockShuttingDownError)
    return { status: 'error', code: LockErrorCode.shuttingDown, message: 'This instance is shutting down' };
  return { status: 'error', code: LockErrorCode.unavailable, message: 'The lock store is unavailable' };
}

/** Not logged by Nest's exception handlers (a busy lock is an answer, not a fault), where the Nest version has it. */
const Intrinsic = (common as unknown as { IntrinsicException?: typeof Error }).IntrinsicException ?? Error;

/**
 * A lock error of a GraphQL resolver: graphql-js copies an error's `extensions` into the error it
 * reports, so clients read `errors[0].extensions.code` (`LOCK_BUSY`, `LOCK_STORE_UNAVAILABLE`,
 * `LOCK_STALE_FENCE`, `LOCK_LOST`, `LOCK_SHUTTING_DOWN`) without this package depending on `graphql`.
 */
export class LockGraphQLError extends Intrinsic {
  /** What GraphQL clients read as `errors[0].extensions`: `code`, `key`, `retryAfterMs`. */
  readonly extensions: Omit<LockErrorPayload, 'status' | 'message'>;

  constructor(payload: LockErrorPayload, options?: ErrorOptions) {
    super(payload.message, options);
    this.name = 'LockGraphQLError';
    const { status: _status, message: _message, ...extensions } = payload;
    this.extensions = extensions;
  }
}
