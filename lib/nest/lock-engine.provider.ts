import type { FactoryProvider } from '@nestjs/common';
import { isLockBackend, createLockBackend } from '../backends/create-backend.js';
import type { LockBackend } from '../backends/lock-backend.js';
import { LockEngine } from '../engine/lock-engine.js';
import { describe } from '../engine/lock-options.js';
import { InvalidLockArgumentError } from '../errors.js';
import { DISTRIBUTED_LOCK_MODULE_OPTIONS } from './distributed-lock.module-definition.js';
import type { DistributedLockModuleOptions } from './distributed-lock.options.js';
import { LOCK_ENGINE } from './lock.constants.js';
import { Messages } from './lock.messages.js';
import { lockRegistry } from './lock.registry.js';

/**
 * Builds the module's engine from its options, at bootstrap: bad options make the application
 * fail to start with InvalidLockArgumentError instead of failing on the first lock.
 */
export async function createLockEngine(options: DistributedLockModuleOptions): Promise<LockEngine> {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidLockArgumentError(Messages.moduleOptionsNotObject(describe(options)));
  }
  const { backend: config, keyPrefix, leaseMs, waitMs } = options;
  const backend = isLockBackend(config) ? borrowed(config) : await createLockBackend(config);
  let engine: LockEngine;
  try {
    engine = new LockEngine(backend, { keyPrefix, leaseMs, waitMs });
  } catch (error) {
    await backend.close().catch(() => undefined);
    throw error;
  }
  lockRegistry.start(engine);
  return engine;
}

/** A backend object the user passed in stays theirs (it may be shared): used, never closed. */
function borrowed(backend: LockBackend): LockBackend {
  return {
    name: backend.name,
    capabilities: backend.capabilities,
    claim: (request) => backend.claim(request),
    ping: backend.ping && (() => backend.ping!()),
    close: async () => undefined,
  };
}

export const lockEngineProvider: FactoryProvider<Promise<LockEngine>> = {
  provide: LOCK_ENGINE,
  useFactory: createLockEngine,
  inject: [DISTRIBUTED_LOCK_MODULE_OPTIONS],
};
