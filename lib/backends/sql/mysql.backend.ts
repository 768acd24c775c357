import { InvalidLockArgumentError } from '../../errors.js';
import type { MysqlBackendOptions } from '../backend-options.js';
import type { LockBackend } from '../lock-backend.js';

// Placeholder until this backend lands.
export async function createMysqlBackend(_options: MysqlBackendOptions): Promise<LockBackend> {
  throw new InvalidLockArgumentError('This backend is not implemented yet');
}
