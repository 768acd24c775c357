import { InvalidLockArgumentError } from '../../errors.js';
import type { RedisBackendOptions } from '../backend-options.js';
import type { LockBackend } from '../lock-backend.js';

// Placeholder until this backend lands.
export async function createRedisBackend(_options: RedisBackendOptions): Promise<LockBackend> {
  throw new InvalidLockArgumentError('This backend is not implemented yet');
}
