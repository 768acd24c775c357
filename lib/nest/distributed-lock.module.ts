import { Inject, Module, type BeforeApplicationShutdown, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LockEngine } from '../engine/lock-engine.js';
import { ConfigurableModuleClass, type OPTIONS_TYPE } from './distributed-lock.module-definition.js';
import { LOCK_ENGINE } from './lock.constants.js';
import { lockEngineProvider } from './lock-engine.provider.js';
import { LockExplorer } from './lock.explorer.js';
import { lockRegistry } from './lock.registry.js';
import { LockService } from './lock.service.js';

/**
 * Distributed locks for a Nest application: provides `LockService` and makes `@Locked()` work.
 *
 * ```ts
 * DistributedLockModule.forRoot({ backend: { type: 'redis', url: 'redis://localhost:6379' } })
 * DistributedLockModule.forRootAsync({ inject: [ConfigService], useFactory: (config) => ({ backend: ... }) })
 * ```
 * Global unless `isGlobal: false`. Options are validated at bootstrap (InvalidLockArgumentError).
 * On shutdown it stops renewals, releases the locks still held and closes the clients it created.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [lockEngineProvider, LockService, LockExplorer],
  exports: [LockService, LOCK_ENGINE],
})
export class DistributedLockModule extends ConfigurableModuleClass implements BeforeApplicationShutdown {
  constructor(@Inject(LOCK_ENGINE) private readonly engine: LockEngine) {
    super();
  }

  /** Registers the module with these options; they are validated when the application boots. */
  static override forRoot(options: typeof OPTIONS_TYPE): DynamicModule {
    // Missing options (from JavaScript) fail at bootstrap like any other bad option, not here with a TypeError.
    return super.forRoot(options ?? ({} as typeof OPTIONS_TYPE));
  }

  /** Before other modules' `onApplicationShutdown` closes shared clients, so releases still reach the store. */
  async beforeApplicationShutdown(): Promise<void> {
    lockRegistry.stop(this.engine);
    await this.engine.close();
  }
}
