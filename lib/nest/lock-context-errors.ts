import * as common from '@nestjs/common';
import { LockBackendError, LockTimeoutError, StaleFenceError } from '../errors.js';
import { loadOptional } from '../engine/load-optional.js';

/** The stable codes lock errors carry outside HTTP (microservices, WebSocket, GraphQL). */
export const LockErrorCode = {
  /** The lock stayed busy for `waitMs` (HTTP: 409). */
  busy: 'LOCK_BUSY',
  /** The lock store could not be reached (HTTP: 503). */
  unavailable: 'LOCK_STORE_UNAVAILABLE',
  /** A fenced write was refused: a newer holder has written since (HTTP: 409). */
  staleFence: 'LOCK_STALE_FENCE',
} as const;

export type LockErrorCode = (typeof LockErrorCode)[keyof typeof LockErrorCode];

/** What a microservice or WebSocket client receives for a lock error, and a GraphQL error's `extensions`. */
export interface LockErrorPayload {
  /** Always `'error'` (Nest's microservice error shape). */
  readonly status: 'error';
  /** `'LOCK_BUSY'` or `'LOCK_STORE_UNAVAILABLE'`. */
  readonly code: LockErrorCode;
  /** A message for people; the store's own message is never in it. */
  readonly message: string;
  /** The busy lock's key. */
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
export type MappedLockError = LockTimeoutError | LockBackendError | StaleFenceError;

/** The payload of a lock error; the store's own message (which may name hosts) is kept out of it. */
export function lockErrorPayload(error: MappedLockError): LockErrorPayload {
  if (error instanceof LockTimeoutError) {
    const retryAfterMs = error.retryAfterMs !== undefined && Number.isFinite(error.retryAfterMs) ? Math.max(0, Math.ceil(error.retryAfterMs)) : undefined;
    return { status: 'error', code: LockErrorCode.busy, message: error.message, key: error.key, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }
  if (error instanceof StaleFenceError) {
    return { status: 'error', code: LockErrorCode.staleFence, message: error.message, resource: error.resource, fence: error.fence, highest: error.highest };
  }
  return { status: 'error', code: LockErrorCode.unavailable, message: 'The lock store is unavailable' };
}

type ExceptionClass = new (error: object) => Error;

/** `RpcException` of @nestjs/microservices, which an app with microservice handlers has installed. */
export async function rpcException(payload: LockErrorPayload, cause: Error): Promise<Error> {
  const { RpcException } = await loadOptional<{ RpcException: ExceptionClass }>('@nestjs/microservices', 'A @Locked() microservice handler');
  return withCause(new RpcException({ ...payload }), cause);
}

/** `WsException` of @nestjs/websockets, which an app with gateways has installed. */
export async function wsException(payload: LockErrorPayload, cause: Error): Promise<Error> {
  const { WsException } = await loadOptional<{ WsException: ExceptionClass }>('@nestjs/websockets', 'A @Locked() WebSocket handler');
  return withCause(new WsException({ ...payload }), cause);
}

/** Not logged by Nest's exception handlers (busy is an answer, not a fault), where the Nest version has it. */
const Intrinsic = ((common as unknown as { IntrinsicException?: typeof Error }).IntrinsicException ?? Error) as typeof Error;

/**
 * A lock error of a GraphQL resolver: graphql-js copies an error's `extensions` into the error it
 * reports, so clients read `errors[0].extensions.code` (`LOCK_BUSY`, `LOCK_STORE_UNAVAILABLE`, `LOCK_STALE_FENCE`)
 * without this package depending on `graphql`.
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

function withCause(exception: Error, cause: Error): Error {
  Object.defineProperty(exception, 'cause', { value: cause, configurable: true, writable: true });
  return exception;
}
