import { InvalidLockArgumentError } from '../../errors.js';
import type { RedlockBackendOptions } from '../backend-options.js';
import type { LockBackend } from '../lock-backend.js';

// Placeholder until this backend lands.
export async function createRedlockBackend(_options: RedlockBackendOptions): Promise<LockBackend> {
  throw new InvalidLockArgumentError('This backend is not implemented yet');
}
