import {
  BadRequestException,
  Body,
  ForbiddenException,
  Headers,
  HttpCode,
  Post,
  Query,
  Req,
  UnsupportedMediaTypeException,
  type CanActivate,
  type Type,
} from '@nestjs/common';
import { answer, createAdminReadController, guardedBy } from './admin-controller.js';
import type { ResolvedAdminOptions } from './admin-options.js';

/** Refuses release when no guard protects it (unless the app opted in): never an open release endpoint by default. */
function releaseSwitch(enabled: boolean): CanActivate {
  return {
    canActivate: () => {
      if (!enabled)
        throw new ForbiddenException(
          'Release is off: register DistributedLockAdminModule with guards (or releaseGuards) to enable it',
        );
      return true;
    },
  };
}

/** Browsers say where a request comes from (`Sec-Fetch-Site`); scripts and curl send nothing. */
const CROSS_SITE = new Set(['cross-site', 'same-site']);

/** The controller of one registration: the read-only one plus `POST <path>/api/release`. */
export function createAdminController(options: ResolvedAdminOptions): Type<unknown> {
  const Read = createAdminReadController(options);
  if (options.readOnly) return Read;

  class DistributedLockAdminReleaseController extends Read {
    /**
     * `POST <path>/api/release?store=` with JSON `{ key, reason }` (a non-empty reason):
     * `LockService.forceRelease`, behind the guards, with the `actor` option's answer.
     */
    @Post('api/release')
    @HttpCode(200)
    @guardedBy([...options.releaseGuards, releaseSwitch(options.releaseEnabled)])
    async release(
      @Req() request: unknown,
      @Headers('content-type') contentType: string | undefined,
      @Headers('sec-fetch-site') fetchSite: string | undefined,
      @Query('store') store: string | undefined,
      @Body() body: unknown,
    ): Promise<{ key: string; released: boolean }> {
      // JSON only: a cross-site form cannot send it without a CORS preflight; and a browser's
      // request from another site is refused outright.
      if (!contentType?.toLowerCase().startsWith('application/json'))
        throw new UnsupportedMediaTypeException('Send JSON: { "key": "...", "reason": "..." }');
      if (fetchSite !== undefined && CROSS_SITE.has(fetchSite))
        throw new ForbiddenException('Release is refused from another site');
      const { key, reason } = (body ?? {}) as { key?: unknown; reason?: unknown };
      if (typeof key !== 'string' || typeof reason !== 'string' || reason.trim() === '') {
        throw new BadRequestException('Body must be { "key": string, "reason": string } with a non-empty reason');
      }
      const { locks } = this.stores.get(store);
      const actor = options.actor?.(request);
      const released = await answer(() =>
        locks.forceRelease(key, {
          reason: reason.trim(),
          ...(typeof actor === 'string' && actor !== '' ? { actor } : {}),
        }),
      );
      return { key, released };
    }
  }
  return DistributedLockAdminReleaseController;
}
