import { Module, type DynamicModule } from '@nestjs/common';
import { createAdminController } from './admin.controller.js';
import { resolveAdminOptions, type DistributedLockAdminOptions } from './admin.options.js';

/**
 * A page for operators, served by the app itself (no build step, nothing from a CDN): held locks
 * with holder, label, fence, a live countdown of the lease and waiters; this instance's lock events
 * live (server-sent events); a prefix filter; and force release behind your guards. JSON
 * endpoints under the same path serve scripts.
 *
 * ```ts
 * DistributedLockAdminModule.register({ path: '/locks', guards: [AdminGuard] })
 * ```
 * Release is refused (403) unless a guard protects it (`guards` or `releaseGuards`). Import it
 * next to `DistributedLockModule` (it shows the unnamed store, or `store`).
 */
@Module({})
export class DistributedLockAdminModule {
  static register(options: DistributedLockAdminOptions = {}): DynamicModule {
    return { module: DistributedLockAdminModule, controllers: [createAdminController(resolveAdminOptions(options))] };
  }
}
