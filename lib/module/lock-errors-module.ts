import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_FILTER, ApplicationConfig } from '@nestjs/core';
import { LockErrorsFilter } from '../nest/errors/lock-errors-filter.js';

/**
 * @internal Imported by every store's `DistributedLockModule`: a static module, so Nest makes one
 * per application however many stores import it, and its application-wide filter is registered once.
 */
@Module({
  providers: [LockErrorsFilter, { provide: APP_FILTER, useExisting: LockErrorsFilter }],
})
export class LockErrorsModule implements NestModule {
  constructor(
    private readonly config: ApplicationConfig,
    private readonly filter: LockErrorsFilter,
  ) {}

  /**
   * Makes the lock errors filter the first global filter Nest tries: `app.useGlobalFilters()`
   * (called before `app.init()`) puts the application's own filters ahead of every `APP_FILTER`,
   * and a catch-all among them would otherwise receive a lock error as thrown rather than its
   * answer. The filter hands each answer on to those filters (see `LockErrorsFilter`). Nest calls
   * `configure()` once it has every global filter and before it sets the routes up.
   */
  configure(_consumer: MiddlewareConsumer): void {
    const filters = this.config.getGlobalFilters();
    if (filters[filters.length - 1] !== this.filter) this.config.useGlobalFilters(this.filter);
  }
}
