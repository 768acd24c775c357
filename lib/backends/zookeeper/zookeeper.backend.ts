import { InvalidLockArgumentError } from '../../errors.js';
import type { ZookeeperBackendOptions } from '../backend-options.js';
import type { LockBackend } from '../lock-backend.js';

// Placeholder until this backend lands.
export async function createZookeeperBackend(_options: ZookeeperBackendOptions): Promise<LockBackend> {
  throw new InvalidLockArgumentError('This backend is not implemented yet');
}
