import { InvalidLockArgumentError } from '../../errors.js';
import type { PostgresBackendOptions } from '../backend-options.js';
import type { LockBackend } from '../lock-backend.js';

// Placeholder until this backend lands.
export async function createPostgresBackend(_options: PostgresBackendOptions): Promise<LockBackend> {
  throw new InvalidLockArgumentError('This backend is not implemented yet');
}
