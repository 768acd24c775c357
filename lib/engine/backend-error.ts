import { DistributedLockError, LockBackendError } from '../errors.js';

/** Errors from a store driver become LockBackendError; the library's own errors pass through. */
export function toBackendError(backend: string, error: unknown): DistributedLockError {
  if (error instanceof DistributedLockError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new LockBackendError(backend, message, { cause: error });
}
