import {
  BadRequestException,
  Controller,
  Get,
  Inject,
  Logger,
  Query,
  Res,
  Sse,
  UseGuards,
  applyDecorators,
  type CanActivate,
  type MessageEvent,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type Type,
} from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import type { Observable } from 'rxjs';
import { InvalidLockArgumentError, LockBackendError } from '../errors.js';
import type { LockInfo, LockList } from '../engine/lock-info.js';
import { LockStoreUnavailableException } from '../nest/errors/lock-http-exceptions.js';
import { getLockServiceToken } from '../nest/store/lock-store-tokens.js';
import type { LockService } from '../nest/lock-service.js';
import type { AdminEventJson } from './admin-event-log.js';
import { adminEventStream } from './admin-events.js';
import { adminPageHtml } from './admin-page.js';
import { AdminStores } from './admin-stores.js';
import type { ResolvedAdminOptions } from './admin-options.js';

/** The header-setting part of an Express response or a Fastify reply. */
interface HeaderTarget {
  header(name: string, value: string): unknown;
}

/** `UseGuards` of a list that may be empty. */
export function guardedBy(guards: readonly (Type<CanActivate> | CanActivate)[]): MethodDecorator & ClassDecorator {
  return guards.length > 0 ? UseGuards(...guards) : applyDecorators();
}

/** Store errors as HTTP answers: bad input 400, store unreachable 503 (`LockStoreUnavailableException`). */
export async function answer<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidLockArgumentError) throw new BadRequestException(error.message);
    if (error instanceof LockBackendError) throw new LockStoreUnavailableException(error);
    throw error;
  }
}

/** The controller of one registration without release: the page and the read-only JSON endpoints. */
export function createAdminReadController(options: ResolvedAdminOptions): Type<{ readonly stores: AdminStores }> {
  @Controller(options.path)
  @guardedBy(options.guards)
  class DistributedLockAdminController implements OnApplicationBootstrap, OnModuleDestroy {
    readonly stores: AdminStores;

    constructor(
      @Inject(getLockServiceToken(options.store)) locks: LockService,
      @Inject(DiscoveryService) discovery: DiscoveryService,
    ) {
      this.stores = new AdminStores(locks, discovery);
    }

    onApplicationBootstrap(): void {
      this.stores.names(); // starts recording each store's events
      if (options.guards.length === 0) new Logger('DistributedLockAdmin').warn(unguardedWarning(options.path));
    }

    onModuleDestroy(): void {
      this.stores.close();
    }

    /** The page. */
    @Get()
    page(@Res({ passthrough: true }) response: HeaderTarget): string {
      const nonce = randomBytes(16).toString('base64');
      response.header('Content-Type', 'text/html; charset=utf-8');
      response.header(
        'Content-Security-Policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      );
      response.header('X-Content-Type-Options', 'nosniff');
      response.header('Cache-Control', 'no-store');
      response.header('Referrer-Policy', 'no-referrer');
      const release = options.readOnly ? 'none' : options.releaseEnabled ? 'on' : 'off';
      return adminPageHtml({ stores: this.stores.names(), release, nonce });
    }

    /** `GET <path>/api/stores`: the stores the page can show, the first (the module's `store`) first. */
    @Get('api/stores')
    storeNames(): { stores: string[] } {
      return { stores: this.stores.names() };
    }

    /** `GET <path>/api/locks?store=&prefix=&limit=&cursor=`: one page of `LockService.list`. */
    @Get('api/locks')
    list(
      @Query('store') store?: string,
      @Query('prefix') prefix?: string,
      @Query('limit') limit?: string,
      @Query('cursor') cursor?: string,
    ): Promise<LockList> {
      const { locks } = this.stores.get(store);
      return answer(() =>
        locks.list({
          prefix: prefix ?? '',
          limit: limit === undefined ? undefined : Number(limit),
          cursor: cursor || undefined,
        }),
      );
    }

    /** `GET <path>/api/inspect?store=&key=`: `LockService.inspect`. */
    @Get('api/inspect')
    inspect(@Query('store') store?: string, @Query('key') key?: string): Promise<LockInfo> {
      const { locks } = this.stores.get(store);
      return answer(() => locks.inspect(key as string));
    }

    /** `GET <path>/api/recent?store=&key=`: this instance's recent events (renewals left out), oldest first. */
    @Get('api/recent')
    recent(@Query('store') store?: string, @Query('key') key?: string): { events: AdminEventJson[] } {
      return { events: this.stores.get(store).log.recent(key || undefined) };
    }

    /** `GET <path>/api/events?store=`: this instance's lock events as server-sent events (`event: lock`). */
    @Sse('api/events')
    events(@Query('store') store?: string): Observable<MessageEvent> {
      return adminEventStream(this.stores.get(store).locks.events);
    }
  }
  return DistributedLockAdminController;
}

function unguardedWarning(path: string): string {
  return `The lock admin page at ${path} has no guards: anyone who reaches the app can read every lock key, holder and label. Register it with guards: [YourAuthGuard] (see "Securing the page" in docs/operations.md)`;
}
