import { HttpException, HttpStatus } from '@nestjs/common';
import { LockBackendError, LockTimeoutError } from '../errors.js';

/** Whole seconds, rounded up, at least 1; undefined when the store did not say how long the holder has left. */
export function retryAfterSeconds(error: LockTimeoutError): number | undefined {
  if (error.retryAfterMs === undefined || !Number.isFinite(error.retryAfterMs)) return undefined;
  return Math.max(1, Math.ceil(error.retryAfterMs / 1000));
}

/** 409 Conflict naming the key, with `retryAfter` in the body when it is known. */
export function conflictException(error: LockTimeoutError, retryAfter: number | undefined): HttpException {
  const body = { statusCode: HttpStatus.CONFLICT, error: 'Conflict', message: error.message, key: error.key, ...(retryAfter === undefined ? {} : { retryAfter }) };
  return new HttpException(body, HttpStatus.CONFLICT, { cause: error });
}

/** 503 Service Unavailable; the store's own message (which may name hosts) is kept out of the body, in `cause`. */
export function unavailableException(error: LockBackendError): HttpException {
  const body = { statusCode: HttpStatus.SERVICE_UNAVAILABLE, error: 'Service Unavailable', message: 'The lock store is unavailable' };
  return new HttpException(body, HttpStatus.SERVICE_UNAVAILABLE, { cause: error });
}

interface HeaderSetter {
  setHeader?: (name: string, value: string) => void;
  header?: (name: string, value: string) => void;
}

/** Sets a response header on Express (`setHeader`) or Fastify (`header`). */
export function setResponseHeader(response: unknown, name: string, value: string): void {
  const target = response as HeaderSetter | undefined;
  if (typeof target?.setHeader === 'function') target.setHeader(name, value);
  else if (typeof target?.header === 'function') target.header(name, value);
}

/**
 * What a client sees for a lock error when no `LockedInterceptor` maps it: LockTimeoutError → 409
 * (and `Retry-After` on `response`), LockBackendError → 503. Other errors are returned unchanged.
 */
export function toHttpError(error: unknown, response: unknown): unknown {
  if (error instanceof LockTimeoutError) {
    const retryAfter = retryAfterSeconds(error);
    if (retryAfter !== undefined) setResponseHeader(response, 'Retry-After', String(retryAfter));
    return conflictException(error, retryAfter);
  }
  if (error instanceof LockBackendError) return unavailableException(error);
  return error;
}
