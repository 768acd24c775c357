import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { createAdminController } from './admin-release-controller.js';
import { resolveAdminOptions, type DistributedLockAdminOptions } from './admin-options.js';

/**
 * A page for operators, served by the app itself (no build step, nothing from a CDN): held locks
 * with their age, holders (instance, label, fence), lease left and waiters, sortable and paged; a
 * detail view per key; this instance's lock events live (server-sent events) and its hot keys; a
 * key filter and a store selector; and force release (with its scope, a reason and who asked)
 * behind your guards. JSON endpoints under the same path serve scripts. Every URL in the page is
 * relative to where it is served, so a global prefix or a proxy sub-path just works.
 *
 * ```ts
 * DistributedLockAdminModule.register({ path: '/locks', guards: [AdminGuard], actor: (request) => request.user?.email })
 * ```
 * Release is refused (403) unless a guard protects it (`guards` or `releaseGuards`); with
 * `readOnly: true` it does not exist. Unknown options are refused (InvalidLockArgumentError), and
 * a page without `guards` is logged as a warning at bootstrap. Import it next to
 * `DistributedLockModule`.
 */
@Module({})
export class DistributedLockAdminModule {
  /** The admin page, its JSON endpoints and its event stream, at `options.path` (default `/locks`). Unknown options are refused with `InvalidLockArgumentError`. */
  static register(options: DistributedLockAdminOptions = {}): DynamicModule {
    return {
      module: DistributedLockAdminModule,
      imports: [DiscoveryModule],
      controllers: [createAdminController(resolveAdminOptions(options))],
    };
  }
}
