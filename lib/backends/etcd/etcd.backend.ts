import { InvalidLockArgumentError } from '../../errors.js';
import type { EtcdBackendOptions } from '../backend-options.js';
import type { LockBackend } from '../lock-backend.js';

// Placeholder until this backend lands.
export async function createEtcdBackend(_options: EtcdBackendOptions): Promise<LockBackend> {
  throw new InvalidLockArgumentError('This backend is not implemented yet');
}
