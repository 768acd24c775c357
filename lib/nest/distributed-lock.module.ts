import { Inject, Module, type BeforeApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LockEngine } from '../engine/lock-engine.js';
import { ConfigurableModuleClass } from './distributed-lock.module-definition.js';
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

  /** Before other modules' `onApplicationShutdown` closes shared clients, so releases still reach the store. */
  async beforeApplicationShutdown(): Promise<void> {
    lockRegistry.stop(this.engine);
    await this.engine.close();
  }
}
