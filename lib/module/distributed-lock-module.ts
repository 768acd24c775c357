import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { leaderProviders } from '../leader/leader-providers.js';
import type {
  DistributedLockModuleAsyncOptions,
  DistributedLockModuleOptions,
} from '../nest/store/distributed-lock-options.js';
import { asyncOptionsProviders, lockStoreProviders, storeNameOf } from '../nest/store/lock-store-providers.js';
import { getLockModuleOptionsToken } from '../nest/store/lock-store-tokens.js';
import { LockErrorsModule } from './lock-errors-module.js';

/**
 * Distributed locks for a Nest application: provides `LockService` and `LeaderService`, and makes
 * `@Locked()`, `@OnLeadership()` and `@LeaderOnly()` work.
 *
 * ```ts
 * DistributedLockModule.forRoot({ backend: { type: 'redis', url: 'redis://localhost:6379' } })
 * DistributedLockModule.forRootAsync({ inject: [ConfigService], useFactory: (config) => ({ backend: ... }) })
 * // a second, named store: @InjectLockService('critical'), @Locked({ key, store: 'critical' })
 * DistributedLockModule.forRoot({ name: 'critical', backend: { type: 'etcd', urls: '...' } })
 * ```
 * Global unless `isGlobal: false`. Options are validated at bootstrap (InvalidLockArgumentError).
 * Lock errors thrown anywhere in a request answer as on `@Locked()` handlers (409, 503...; see
 * docs/errors.md) unless `mapErrors: false`: one exception filter for the application, which runs
 * only when a call throws.
 * On shutdown it stops renewals, releases the locks still held and closes the clients it created.
 */
@Module({})
export class DistributedLockModule {
  /** Registers a store with these options; they are validated when the application boots. */
  static forRoot(options: DistributedLockModuleOptions): DynamicModule {
    const name = storeNameOf(options?.name);
    // Missing options (from JavaScript) fail at bootstrap like any other bad option, not here with a TypeError.
    return storeModule(name, options?.isGlobal, options?.mapErrors, [
      { provide: getLockModuleOptionsToken(name), useValue: options },
    ]);
  }

  /** Registers a store whose options come from a factory, a class of yours, or an existing provider. */
  static forRootAsync(options: DistributedLockModuleAsyncOptions): DynamicModule {
    const name = storeNameOf(options?.name);
    return storeModule(
      name,
      options?.isGlobal,
      options?.mapErrors,
      asyncOptionsProviders(name, options ?? {}),
      options?.imports,
    );
  }
}

/** One store's dynamic module: the lock layer's providers and leader election's, side by side, and the application's lock errors filter. */
function storeModule(
  name: string,
  isGlobal: boolean | undefined,
  mapErrors: unknown,
  options: Provider[],
  imports: DynamicModule['imports'] = [],
): DynamicModule {
  const locks = lockStoreProviders(name, options, mapErrors === false ? false : undefined);
  const leaders = leaderProviders(name);
  return {
    module: DistributedLockModule,
    global: isGlobal !== false,
    imports: [DiscoveryModule, LockErrorsModule, ...imports],
    providers: [...locks.providers, ...leaders.providers],
    exports: [...locks.exports, ...leaders.exports],
  };
}
