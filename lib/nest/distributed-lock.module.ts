import { Module, type DynamicModule } from '@nestjs/common';
import type { DistributedLockModuleAsyncOptions, DistributedLockModuleOptions } from './distributed-lock.options.js';
import { getLockModuleOptionsToken } from './lock-store.tokens.js';
import { asyncOptionsProviders, lockStoreModule, storeNameOf } from './lock-store.providers.js';

/**
 * Distributed locks for a Nest application: provides `LockService` and makes `@Locked()` work.
 *
 * ```ts
 * DistributedLockModule.forRoot({ backend: { type: 'redis', url: 'redis://localhost:6379' } })
 * DistributedLockModule.forRootAsync({ inject: [ConfigService], useFactory: (config) => ({ backend: ... }) })
 * // a second, named store: @InjectLockService('critical'), @Locked({ key, store: 'critical' })
 * DistributedLockModule.forRoot({ name: 'critical', backend: { type: 'etcd', hosts: '...' } })
 * ```
 * Global unless `isGlobal: false`. Options are validated at bootstrap (InvalidLockArgumentError).
 * On shutdown it stops renewals, releases the locks still held and closes the clients it created.
 */
@Module({})
export class DistributedLockModule {
  /** Registers a store with these options; they are validated when the application boots. */
  static forRoot(options: DistributedLockModuleOptions): DynamicModule {
    const name = storeNameOf(options?.name);
    // Missing options (from JavaScript) fail at bootstrap like any other bad option, not here with a TypeError.
    return lockStoreModule(DistributedLockModule, name, options?.isGlobal, [{ provide: getLockModuleOptionsToken(name), useValue: options }]);
  }

  /** Registers a store whose options come from a factory, a class of yours, or an existing provider. */
  static forRootAsync(options: DistributedLockModuleAsyncOptions): DynamicModule {
    const name = storeNameOf(options?.name);
    return lockStoreModule(DistributedLockModule, name, options?.isGlobal, asyncOptionsProviders(name, options ?? {}), options?.imports);
  }
}
