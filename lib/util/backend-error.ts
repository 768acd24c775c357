import { DistributedLockError, LockBackendError } from '../errors.js';

/**
 * Errors from a store driver become LockBackendError naming the store's address (when the backend
 * gives one, see `LockBackend.address`); the library's own errors pass through.
 */
export function toBackendError(backend: string, error: unknown, address?: string): DistributedLockError {
  if (error instanceof DistributedLockError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new LockBackendError(backend, atAddress(message, address), { cause: error });
}

/** `message (at host:port)`, unless the address is unknown or the message names it already. */
export function atAddress(message: string, address: string | undefined): string {
  return address === undefined || address === '' || message.includes(address) ? message : `${message} (at ${address})`;
}
