import {
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { catchError, throwError, type Observable } from 'rxjs';
import { LockEngine } from '../engine/lock-engine.js';
import { LockBackendError, LockTimeoutError } from '../errors.js';
import { runInHandlerContext, type RequestParts } from './handler-context.js';
import { LOCK_ENGINE } from './lock.constants.js';

/**
 * Applied by `@Locked()` to every decorated method; only HTTP handlers are affected. It runs the
 * handler with its request visible to key templates (`{params.sku}`), and maps lock errors to
 * HTTP: LockTimeoutError → 409 Conflict (with `Retry-After` when the holder's remaining lease is
 * known), LockBackendError → 503 Service Unavailable. Other contexts (rpc, ws, graphql) are passed
 * through unchanged. It acquires nothing: the `@Locked()` wrapper does, exactly once per call.
 *
 * Customise by subclassing and overriding the protected hooks, then register the subclass with
 * `APP_INTERCEPTOR` or `@UseInterceptors()`. Registering it globally also maps lock errors of
 * handlers that call `LockService` directly.
 */
@Injectable()
export class LockedInterceptor implements NestInterceptor {
  constructor(@Optional() @Inject(LOCK_ENGINE) protected readonly engine?: LockEngine) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const handlerContext = { handler: context.getHandler(), request: this.getRequest(context), engine: this.engine };
    // next.handle() binds the async context the handler will run in, so it must be called inside.
    return runInHandlerContext(handlerContext, () => next.handle()).pipe(
      catchError((error: unknown) => throwError(() => this.mapError(error, context))),
    );
  }

  /** The request whose `params`, `query`, `body` and `headers` key templates may name. */
  protected getRequest(context: ExecutionContext): RequestParts {
    return context.switchToHttp().getRequest<RequestParts>();
  }

  /** Turns a lock error into what the client sees; other errors are returned unchanged. */
  protected mapError(error: unknown, context: ExecutionContext): unknown {
    if (error instanceof LockTimeoutError) return this.busyException(error, context);
    if (error instanceof LockBackendError) return this.unavailableException(error, context);
    return error;
  }

  /** 409 Conflict naming the key; sets `Retry-After` when the holder's remaining lease is known. */
  protected busyException(error: LockTimeoutError, context: ExecutionContext): HttpException {
    const retryAfter = this.retryAfterSeconds(error);
    if (retryAfter !== undefined) this.setHeader(context, 'Retry-After', String(retryAfter));
    const body = { statusCode: HttpStatus.CONFLICT, error: 'Conflict', message: error.message, key: error.key, ...(retryAfter === undefined ? {} : { retryAfter }) };
    return new HttpException(body, HttpStatus.CONFLICT, { cause: error });
  }

  /** 503 Service Unavailable; the store's own message (which may name hosts) is kept out of the body, in `cause`. */
  protected unavailableException(error: LockBackendError, _context: ExecutionContext): HttpException {
    const body = { statusCode: HttpStatus.SERVICE_UNAVAILABLE, error: 'Service Unavailable', message: 'The lock store is unavailable' };
    return new HttpException(body, HttpStatus.SERVICE_UNAVAILABLE, { cause: error });
  }

  /** Whole seconds, rounded up, at least 1; undefined when the store did not say. */
  protected retryAfterSeconds(error: LockTimeoutError): number | undefined {
    if (error.retryAfterMs === undefined || !Number.isFinite(error.retryAfterMs)) return undefined;
    return Math.max(1, Math.ceil(error.retryAfterMs / 1000));
  }

  /** Sets a response header on Express (`setHeader`) or Fastify (`header`). */
  protected setHeader(context: ExecutionContext, name: string, value: string): void {
    const response = context.switchToHttp().getResponse<{ setHeader?: (n: string, v: string) => void; header?: (n: string, v: string) => void }>();
    if (typeof response.setHeader === 'function') response.setHeader(name, value);
    else response.header?.(name, value);
  }
}
