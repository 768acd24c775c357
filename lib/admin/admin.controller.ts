import {
  BadRequestException,
  Body,
  Controller,
  ForbiddenException,
  Get,
  Headers,
  HttpCode,
  Inject,
  Post,
  Query,
  Res,
  ServiceUnavailableException,
  Sse,
  UnsupportedMediaTypeException,
  UseGuards,
  applyDecorators,
  type CanActivate,
  type MessageEvent,
  type Type,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Observable } from 'rxjs';
import { InvalidLockArgumentError, LockBackendError } from '../errors.js';
import type { LockInfo, LockList } from '../engine/lock-info.js';
import { getLockServiceToken } from '../nest/lock-store.tokens.js';
import type { LockService } from '../nest/lock.service.js';
import { adminEventStream } from './admin-events.js';
import { adminPageHtml } from './admin-page.js';
import type { ResolvedAdminOptions } from './admin.options.js';

/** The header-setting part of an Express response or a Fastify reply. */
interface HeaderTarget {
  header(name: string, value: string): unknown;
}

/** Refuses release when no guard protects it (unless the app opted in): never an open release endpoint by default. */
function releaseSwitch(enabled: boolean): CanActivate {
  return {
    canActivate: () => {
      if (!enabled) throw new ForbiddenException('Release is off: register DistributedLockAdminModule with guards (or releaseGuards) to enable it');
      return true;
    },
  };
}

/** `UseGuards` of a list that may be empty. */
function guardedBy(guards: readonly (Type<CanActivate> | CanActivate)[]): MethodDecorator & ClassDecorator {
  return guards.length > 0 ? UseGuards(...guards) : applyDecorators();
}

/** Store errors as HTTP answers: bad input 400, store unreachable 503. */
async function answer<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidLockArgumentError) throw new BadRequestException(error.message);
    if (error instanceof LockBackendError) throw new ServiceUnavailableException(error.message);
    throw error;
  }
}

/** Builds the admin controller for one registration (its path and guards are decided at registration). */
export function createAdminController(options: ResolvedAdminOptions): Type<unknown> {
  @Controller(options.path)
  @guardedBy(options.guards)
  class DistributedLockAdminController {
    constructor(@Inject(getLockServiceToken(options.store)) private readonly locks: LockService) {}

    /** The page. */
    @Get()
    page(@Res({ passthrough: true }) response: HeaderTarget): string {
      const nonce = randomBytes(16).toString('base64');
      response.header('Content-Type', 'text/html; charset=utf-8');
      response.header('Content-Security-Policy', `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
      response.header('X-Content-Type-Options', 'nosniff');
      response.header('Cache-Control', 'no-store');
      response.header('Referrer-Policy', 'no-referrer');
      return adminPageHtml({ basePath: options.path, store: this.locks.name, releaseEnabled: options.releaseEnabled, nonce });
    }

    /** `GET <path>/api/locks?prefix=&limit=&cursor=`: one page of `LockService.list`. */
    @Get('api/locks')
    list(@Query('prefix') prefix?: string, @Query('limit') limit?: string, @Query('cursor') cursor?: string): Promise<LockList> {
      return answer(() => this.locks.list({ prefix: prefix ?? '', limit: limit === undefined ? undefined : Number(limit), cursor: cursor || undefined }));
    }

    /** `GET <path>/api/inspect?key=`: `LockService.inspect`. */
    @Get('api/inspect')
    inspect(@Query('key') key?: string): Promise<LockInfo> {
      return answer(() => this.locks.inspect(key as string));
    }

    /** `GET <path>/api/events`: this instance's lock events as server-sent events (`event: lock`). */
    @Sse('api/events')
    events(): Observable<MessageEvent> {
      return adminEventStream(this.locks.events);
    }

    /** `POST <path>/api/release` with JSON `{ key, reason? }`: `LockService.forceRelease`, behind the guards. */
    @Post('api/release')
    @HttpCode(200)
    @guardedBy([...options.releaseGuards, releaseSwitch(options.releaseEnabled)])
    async release(@Headers('content-type') contentType: string | undefined, @Body() body: unknown): Promise<{ key: string; released: boolean }> {
      // JSON only: a cross-site form cannot send it without a CORS preflight.
      if (!contentType?.toLowerCase().startsWith('application/json')) throw new UnsupportedMediaTypeException('Send JSON: { "key": "...", "reason": "..." }');
      const { key, reason } = (body ?? {}) as { key?: unknown; reason?: unknown };
      if (typeof key !== 'string' || (reason !== undefined && typeof reason !== 'string')) throw new BadRequestException('Body must be { "key": string, "reason"?: string }');
      const released = await answer(() => this.locks.forceRelease(key, { reason: reason ?? 'released on the admin page' }));
      return { key, released };
    }
  }
  return DistributedLockAdminController;
}
