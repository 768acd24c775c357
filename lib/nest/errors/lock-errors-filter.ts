import { Catch, Injectable, Optional, type ArgumentsHost, type OnModuleInit } from '@nestjs/common';
import { ApplicationConfig, BaseExceptionFilter } from '@nestjs/core';
import {
  LockBackendError,
  LockLostError,
  LockShuttingDownError,
  LockTimeoutError,
  StaleFenceError,
} from '../../errors.js';
import { caughtTypesOf, type HandlerKind } from '../nest-metadata.js';
import { answerLockError, baseFilterOf, preloadContextException } from './lock-error-answers.js';
import {
  LockBusyException,
  LockLostException,
  LockShuttingDownException,
  LockStoreUnavailableException,
  type LockAnswerHeaders,
} from './lock-http-exceptions.js';
import { StaleFenceException } from './stale-fence-exception.js';

/** The library's HTTP exceptions: they name the headers their answer carries. */
const HTTP_EXCEPTIONS = [
  LockBusyException,
  LockStoreUnavailableException,
  StaleFenceException,
  LockLostException,
  LockShuttingDownException,
] as const;

/**
 * Answers lock errors wherever in a call they are thrown, as `@Locked()` handlers answer theirs
 * (docs/errors.md): `DistributedLockModule` registers it once per application as a global filter
 * (`APP_FILTER`). Like every exception filter it runs only when a call throws, so a route that
 * takes no lock runs exactly what it runs without the module.
 *
 * - A lock error thrown outside a `@Locked()` handler (`LockService.withLock()`, a `@Locked()`
 *   service method, a fence guard) becomes the context's exception (`LockBusyException`...),
 *   unless the application turned that off (`mapErrors: false`).
 * - HTTP: it sets the headers the exception names (`Retry-After`, `Connection: close`).
 * - Then the exception goes to the application's other global filters, in Nest's order, as if
 *   it had been thrown so (a `@Catch(LockBusyException)` or catch-all filter of yours receives
 *   the library's exception class); with none of them for it, it is answered as Nest answers it
 *   (409, 503, an `RpcException`, a `WsException`, a GraphQL error), without an error log.
 *
 * Nest applies no global filter to WebSocket gateways: for lock errors thrown in a gateway handler
 * that has no `@Locked()`, put `@UseFilters(LockErrorsFilter)` on the gateway.
 */
@Catch(LockTimeoutError, LockBackendError, StaleFenceError, LockLostError, LockShuttingDownError, ...HTTP_EXCEPTIONS)
@Injectable()
export class LockErrorsFilter extends BaseExceptionFilter implements OnModuleInit {
  /** Lock errors thrown outside `@Locked()` handlers are answered; `false` (`mapErrors: false`): they go on as thrown. */
  mapsErrors = true;

  constructor(@Optional() private readonly config?: ApplicationConfig) {
    super();
  }

  /** Loads `RpcException` and `WsException` where their packages are installed, so an answer never waits for an import. */
  async onModuleInit(): Promise<void> {
    await Promise.all((['rpc', 'ws'] as const).map((kind) => preloadContextException(kind).catch(() => undefined)));
  }

  /** Answers a lock error (or one of the library's exceptions) thrown in the call `host` describes: see the class. */
  override catch(exception: unknown, host: ArgumentsHost): unknown {
    const kind = host.getType<HandlerKind>();
    const answer = this.mapsErrors ? answerLockError(exception, kind) : exception;
    if (answer instanceof Promise) {
      // Only before the context's package was loaded, which onModuleInit does: never for HTTP.
      return answer.then((loaded: unknown) => this.pass(loaded, host, kind));
    }
    return this.pass(answer, host, kind);
  }

  /** Sets the answer's headers, then hands it to the filter Nest would have picked for it, or answers it as Nest does. */
  private pass(exception: unknown, host: ArgumentsHost, kind: HandlerKind): unknown {
    if (kind === 'http') this.setHeaders(exception, host);
    // Nest applies no global filter to WebSocket gateways, so none is next there.
    const next = kind === 'ws' ? undefined : this.nextGlobalFilter(exception);
    if (next) return next.catch(exception, host);
    if (kind === 'http') return super.catch(exception, host);
    if (kind === 'graphql') return exception;
    return baseFilterOf(kind)?.catch(exception, host) ?? exception;
  }

  private setHeaders(exception: unknown, host: ArgumentsHost): void {
    if (!HTTP_EXCEPTIONS.some((type) => exception instanceof type)) return;
    const adapter = this.httpAdapterHost?.httpAdapter;
    const response: unknown = host.getArgByIndex(1);
    if (!adapter || adapter.isHeadersSent(response)) return;
    for (const [name, value] of Object.entries((exception as { headers: LockAnswerHeaders }).headers))
      adapter.setHeader(response, name, value);
  }

  /** The application's global filter Nest would pick for `exception`, other than this one: the last registered first. */
  private nextGlobalFilter(
    exception: unknown,
  ): { catch(exception: unknown, host: ArgumentsHost): unknown } | undefined {
    const filters = this.config?.getGlobalFilters() ?? [];
    for (let i = filters.length - 1; i >= 0; i--) {
      const filter = filters[i] as { catch?: unknown } | undefined;
      if (!filter || filter instanceof LockErrorsFilter || typeof filter.catch !== 'function') continue;
      const types = caughtTypesOf(filter);
      if (types.length === 0 || types.some((type) => exception instanceof type))
        return filter as { catch(exception: unknown, host: ArgumentsHost): unknown };
    }
    return undefined;
  }
}
