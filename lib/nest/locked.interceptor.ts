import {
  HttpException,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { catchError, throwError, type Observable } from 'rxjs';
import { LockBackendError, LockTimeoutError } from '../errors.js';
import { markIntercepted } from './intercepted-requests.js';
import type { RequestParts } from './key-template.js';
import { conflictException, retryAfterSeconds, setResponseHeader, unavailableException } from './lock-http-errors.js';

/**
 * Maps lock errors of HTTP handlers: LockTimeoutError → 409 Conflict (with `Retry-After` when the
 * holder's remaining lease is known), LockBackendError → 503 Service Unavailable. Other contexts
 * (rpc, ws, graphql) are passed through unchanged. It acquires nothing.
 *
 * `@Locked()` route handlers give these same answers without it (the decorator maps its errors
 * itself, with no interceptor on the request path). Register it, with `APP_INTERCEPTOR` or
 * `@UseInterceptors()`, to map the lock errors of handlers that call `LockService` directly; or
 * subclass it and override the protected hooks to change the answers: on requests it handles,
 * `@Locked()` handlers leave their lock errors to it, and take the request parts their key
 * templates name from `getRequest()`.
 */
@Injectable()
export class LockedInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    markIntercepted(context.switchToHttp().getRequest(), this.getRequest(context));
    return next.handle().pipe(catchError((error: unknown) => throwError(() => this.mapError(error, context))));
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
    return conflictException(error, retryAfter);
  }

  /** 503 Service Unavailable; the store's own message (which may name hosts) is kept out of the body, in `cause`. */
  protected unavailableException(error: LockBackendError, _context: ExecutionContext): HttpException {
    return unavailableException(error);
  }

  /** Whole seconds, rounded up, at least 1; undefined when the store did not say. */
  protected retryAfterSeconds(error: LockTimeoutError): number | undefined {
    return retryAfterSeconds(error);
  }

  /** Sets a response header on Express (`setHeader`) or Fastify (`header`). */
  protected setHeader(context: ExecutionContext, name: string, value: string): void {
    setResponseHeader(context.switchToHttp().getResponse(), name, value);
  }
}
