import type { BeforeApplicationShutdown } from '@nestjs/common';
import { createLockBackend, isLockBackend } from '../../backends/create-backend.js';
import { checkGracefulMs } from '../../engine/drain.js';
import { LockEngine } from '../../engine/lock-engine.js';
import { checkKnownFields } from '../../util/known-fields.js';
import { describe } from '../../engine/lock-options.js';
import { InvalidLockArgumentError } from '../../errors.js';
import type { DistributedLockModuleOptions } from './distributed-lock-options.js';
import { borrowedBackend } from './borrowed-backend.js';
import { Messages } from '../lock-messages.js';
import { lockRegistry } from '../locked/lock-registry.js';
import { checkStopAccepting } from './stop-accepting-option.js';

/**
 * How long `app.close()` lets the work already inside a lock finish before revoking what is still
 * held: 10 s, a third of Kubernetes' default 30 s grace period, which leaves room for the HTTP
 * server's close and the other modules' hooks; the default `waitMs` is as long.
 */
const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * @internal One lock store of an application (one `forRoot()`): its name and engine. It tells
 * `@Locked()` methods that it runs, and on shutdown drains: in `beforeApplicationShutdown`, while
 * Nest's HTTP server still answers the requests under way and before other modules'
 * `onApplicationShutdown` closes shared clients, it refuses new locks, lets the ones held finish
 * for up to `gracefulShutdownTimeoutMs`, then releases what is left and closes what it created.
 */
export class LockStore implements BeforeApplicationShutdown {
  constructor(
    readonly name: string,
    readonly engine: LockEngine,
    /** Lock errors thrown anywhere in a request are answered as on `@Locked()` handlers (the module option `mapErrors`). */
    readonly mapErrors = true,
    readonly gracefulShutdownTimeoutMs = DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
  ) {
    lockRegistry.start(name, engine);
  }

  async beforeApplicationShutdown(): Promise<void> {
    try {
      await this.engine.close({ gracefulMs: this.gracefulShutdownTimeoutMs });
    } finally {
      lockRegistry.stop(this.name, this.engine);
    }
  }
}

/** Every field of the module's options; the type keeps the list in step with the interface. */
const MODULE_OPTION_NAMES = Object.keys({
  name: true,
  backend: true,
  instance: true,
  keyPrefix: true,
  leaseMs: true,
  waitMs: true,
  maxWaitMs: true,
  mapErrors: true,
  isGlobal: true,
  gracefulShutdownTimeoutMs: true,
  stopAcceptingOnShutdown: true,
} satisfies Record<keyof DistributedLockModuleOptions, true>);

/**
 * Builds the store from its module options, at bootstrap: bad options make the application fail to
 * start with InvalidLockArgumentError instead of failing on the first lock.
 */
export async function createLockStore(
  name: string,
  options: DistributedLockModuleOptions,
  mapErrorsArgument?: boolean,
): Promise<LockStore> {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidLockArgumentError(Messages.moduleOptionsNotObject(describe(options)));
  }
  checkKnownFields(options, MODULE_OPTION_NAMES, 'DistributedLockModule');
  const { backend: config, keyPrefix, leaseMs, waitMs, maxWaitMs, instance, mapErrors } = options;
  if (mapErrors !== undefined && typeof mapErrors !== 'boolean')
    throw new InvalidLockArgumentError(Messages.mapErrorsOption(describe(mapErrors)));
  checkStopAccepting(options.stopAcceptingOnShutdown);
  if (options.name !== undefined && options.name !== name)
    throw new InvalidLockArgumentError(Messages.storeNameMismatch(name, describe(options.name)));
  const gracefulMs =
    options.gracefulShutdownTimeoutMs === undefined
      ? undefined
      : checkGracefulMs(options.gracefulShutdownTimeoutMs, 'DistributedLockModule: gracefulShutdownTimeoutMs');
  const backend = isLockBackend(config) ? borrowedBackend(config) : await createLockBackend(config);
  try {
    return new LockStore(
      name,
      new LockEngine(backend, { name, instance, keyPrefix, leaseMs, waitMs, maxWaitMs }),
      mapErrors !== false && mapErrorsArgument !== false,
      gracefulMs,
    );
  } catch (error) {
    await backend.close().catch(() => undefined);
    throw error;
  }
}
