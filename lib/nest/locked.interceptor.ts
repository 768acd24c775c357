import { Inject, Injectable, Optional, type CallHandler, type ExecutionContext, type NestInterceptor, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Observable, type Subscriber } from 'rxjs';
import { DistributedLockError, LockBackendError, LockShuttingDownError, LockTimeoutError, StaleFenceError } from '../errors.js';
import { HandlerCall } from './handler-call.js';
import { HandlerResponse } from './handler-response.js';
import type { KeyParts } from './key-template.js';
import { LOCK_MODULE_IMPORTED } from './lock.constants.js';
import { LockGraphQLError, lockErrorPayload, rpcException, wsException, type MappedLockError } from './lock-context-errors.js';
import { LockBusyException, LockStoreUnavailableException } from './lock-http.exceptions.js';
import { Messages } from './lock.messages.js';
import { StaleFenceException } from './stale-fence.exception.js';

interface HeaderSetter {
  setHeader?: (name: string, value: string) => void;
  header?: (name: string, value: string) => void;
}

/**
 * `Retry-After` of a 503: a store failover or a restarting instance behind a load balancer is
 * usually over within seconds, and a second keeps clients from retrying in a tight loop.
 */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** Calls a LockedInterceptor already serves: one registered globally serves them, the one `@Locked()` attached steps aside. */
const served = new WeakSet<ExecutionContext>();

/** @internal A LockedInterceptor serves this call (and answers its lock errors). */
export const isServedByLockedInterceptor = (context: ExecutionContext): boolean => served.has(context);

/**
 * The interceptor `@Locked()` attaches to every method it decorates, for the calls Nest makes of
 * it as a route, microservice, WebSocket or GraphQL handler. It keeps the locks the handler's
 * `@Locked()` takes until the response is complete (an Observable or SSE stream ended, a streamed
 * body sent), with the handler and everything it calls seeing them as `LockService.current()`; it
 * gives key templates the call's parts (`{params.x}`, `{data.x}`, `{args.x}`); and it answers lock
 * errors in the context's own terms: over HTTP a `LockBusyException` (409, with `Retry-After` when this
 * instance has an idea of when the key frees) or a `LockStoreUnavailableException` (503), which a
 * user's `@Catch()` filter can shape; an `RpcException`, a `WsException` or a GraphQL error whose
 * code is `LOCK_BUSY` / `LOCK_STORE_UNAVAILABLE`. A `StaleFenceError` answers 409 (`StaleFenceException`)
 * or `LOCK_STALE_FENCE`.
 *
 * To change the answers, subclass it and override the protected hooks, then register the subclass
 * with `APP_INTERCEPTOR` (or `@UseInterceptors()` on a controller): running first, it serves the
 * `@Locked()` handlers it covers, and also maps the lock errors of handlers that call `LockService`
 * directly. The one `@Locked()` attached then does nothing.
 *
 * Created by Nest in an application that does not import `DistributedLockModule`, it fails
 * `app.init()` with a message naming the module, rather than the first call.
 */
@Injectable()
export class LockedInterceptor implements NestInterceptor, OnModuleInit {
  /** The call's key parts through the overridable hooks: one function per interceptor, not one per call. */
  private readonly readKeyParts = (context: ExecutionContext): KeyParts => this.getKeyParts(context);
  private readonly failCall = (subscriber: Subscriber<unknown>, error: unknown, context: ExecutionContext): void => this.fail(subscriber, error, context);

  // A property, not a constructor parameter: subclasses keep their own constructors.
  @Optional() @Inject(ModuleRef) private readonly moduleRef?: ModuleRef;

  /** Fails bootstrap when the application never imported `DistributedLockModule` (the `@Locked()` methods it serves could never lock). */
  onModuleInit(): void {
    if (this.moduleRef === undefined) return;
    try {
      this.moduleRef.get(LOCK_MODULE_IMPORTED, { strict: false });
    } catch {
      throw new DistributedLockError(Messages.moduleNotImported());
    }
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (served.has(context)) return next.handle();
    served.add(context);
    const call = new HandlerCall(context, this.readKeyParts);
    // The response is the HTTP arguments' second (what switchToHttp().getResponse() reads, without the per-call accessors it builds).
    const response = context.getType() === 'http' ? context.getArgByIndex<unknown>(1) : undefined;
    return new Observable((subscriber) => new HandlerResponse(call, subscriber, response, this.failCall).start(next));
  }

  /**
   * The parts of the call key templates may name: an HTTP request's `params`, `query`, `body` and
   * `headers`; a microservice or WebSocket message's payload as `data`; GraphQL arguments as `args`.
   */
  protected getKeyParts(context: ExecutionContext): KeyParts {
    switch (context.getType<string>()) {
      case 'http':
        return this.getRequest(context);
      case 'rpc':
        return { data: context.switchToRpc().getData() };
      case 'ws':
        return { data: context.switchToWs().getData() };
      case 'graphql':
        return { args: context.getArgByIndex(1) };
      default:
        return {};
    }
  }

  /**
   * The HTTP request parts key templates may name: the request itself, whose `params`, `query`,
   * `body` and `headers` Express and Fastify both have. Read only as a template names them (Express
   * parses the query string on each read of `query`).
   */
  protected getRequest(context: ExecutionContext): KeyParts {
    return context.getArgByIndex<KeyParts>(0);
  }

  /** Turns a lock error into what the caller sees, in the context's terms; other errors are returned unchanged. */
  protected mapError(error: unknown, context: ExecutionContext): unknown {
    if (error instanceof LockTimeoutError) return this.busyException(error, context);
    if (error instanceof LockBackendError) return this.unavailableException(error, context);
    if (error instanceof LockShuttingDownError) return this.unavailableException(new LockBackendError(error.backend, 'the lock service is shutting down', { cause: error }), context);
    if (error instanceof StaleFenceError) return this.staleFenceException(error, context);
    return error;
  }

  /** HTTP: `LockBusyException` (409 naming the key), with `Retry-After` when `retryAfterSeconds` knows it. Elsewhere: code `LOCK_BUSY`. */
  protected busyException(error: LockTimeoutError, context: ExecutionContext): unknown {
    if (context.getType() !== 'http') return this.contextException(error, context);
    const retryAfter = this.retryAfterSeconds(error);
    if (retryAfter !== undefined) this.setHeader(context, 'Retry-After', String(retryAfter));
    return new LockBusyException(error, retryAfter);
  }

  /**
   * HTTP: `LockStoreUnavailableException` (503 with `Retry-After: 1`; the store's own message, which
   * may name hosts, stays in `cause`). Elsewhere: code `LOCK_STORE_UNAVAILABLE`.
   */
  protected unavailableException(error: LockBackendError, context: ExecutionContext): unknown {
    if (context.getType() !== 'http') return this.contextException(error, context);
    this.setHeader(context, 'Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    return new LockStoreUnavailableException(error, UNAVAILABLE_RETRY_AFTER_SECONDS);
  }

  /** HTTP: `StaleFenceException` (409 with `resource`, `fence` and `highest`). Elsewhere: code `LOCK_STALE_FENCE` with the same fields. */
  protected staleFenceException(error: StaleFenceError, context: ExecutionContext): unknown {
    if (context.getType() !== 'http') return this.contextException(error, context);
    return new StaleFenceException(error);
  }

  /**
   * An `RpcException` or `WsException` whose error is `{ status, code, message, key?, retryAfterMs? }`
   * (a stale fence: `resource`, `fence`, `highest`), or a GraphQL error with those `extensions`.
   */
  protected contextException(error: MappedLockError, context: ExecutionContext): unknown {
    const payload = lockErrorPayload(error);
    switch (context.getType<string>()) {
      case 'rpc':
        return rpcException(payload, error);
      case 'ws':
        return wsException(payload, error);
      case 'graphql':
        return new LockGraphQLError(payload, { cause: error });
      default:
        return error;
    }
  }

  /**
   * `Retry-After`: `error.likelyFreeInMs` (this instance's recent holds of the key, less the current
   * hold's age when it is the holder) in whole seconds, rounded up, at least 1; undefined (no
   * header) when this instance has not held the key recently. Not the holder's lease, which
   * renewals keep full for as long as it works.
   */
  protected retryAfterSeconds(error: LockTimeoutError): number | undefined {
    if (error.likelyFreeInMs === undefined || !Number.isFinite(error.likelyFreeInMs)) return undefined;
    return Math.max(1, Math.ceil(error.likelyFreeInMs / 1000));
  }

  /** Sets a response header on Express (`setHeader`) or Fastify (`header`). */
  protected setHeader(context: ExecutionContext, name: string, value: string): void {
    const response = context.switchToHttp().getResponse<HeaderSetter | undefined>();
    if (typeof response?.setHeader === 'function') response.setHeader(name, value);
    else if (typeof response?.header === 'function') response.header(name, value);
  }

  /** Errors the subscriber with the mapped error. */
  private fail(subscriber: Subscriber<unknown>, error: unknown, context: ExecutionContext): void {
    const mapped = this.mapErrorSafely(error, context);
    if (mapped instanceof Promise) mapped.then((value) => subscriber.error(value), (reason: unknown) => subscriber.error(reason));
    else subscriber.error(mapped);
  }

  /** @internal `mapError`, whose failure is the answer (the hooks may also answer with a promise of it). */
  protected mapErrorSafely(error: unknown, context: ExecutionContext): unknown {
    try {
      return this.mapError(error, context);
    } catch (mappingError) {
      return mappingError;
    }
  }
}
