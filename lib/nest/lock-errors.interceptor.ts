import { Injectable, type CallHandler, type ExecutionContext, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { catchError, type Observable } from 'rxjs';
import { LockStore } from './lock-store.js';
import { isServedByLockedInterceptor, LockedInterceptor } from './locked.interceptor.js';

/**
 * @internal The application-wide interceptor `DistributedLockModule` registers once (however many
 * stores): a lock error thrown anywhere in a handler's call (a `@Locked()` service method,
 * `withLock`, `acquire`, a fence guard) answers as on a `@Locked()` handler, with the mapping hooks
 * of `LockedInterceptor`. A call some `LockedInterceptor` serves (the one `@Locked()` attached, or a
 * subclass of yours registered with `APP_INTERCEPTOR`) is left to it, whichever runs first. Off when
 * a store of the application has `mapErrors: false`. Costs one `catchError` per call; nothing else
 * runs unless the call fails.
 */
@Injectable()
export class LockErrorsInterceptor extends LockedInterceptor implements OnApplicationBootstrap {
  private enabled = true;

  constructor(private readonly discovery: DiscoveryService) {
    super();
  }

  onApplicationBootstrap(): void {
    this.enabled = !this.discovery.getProviders().some((wrapper) => wrapper.instance instanceof LockStore && !wrapper.instance.mapErrors);
  }

  override intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.enabled) return next.handle();
    return next.handle().pipe(catchError((error: unknown) => this.answer(error, context)));
  }

  private answer(error: unknown, context: ExecutionContext): Promise<never> {
    if (isServedByLockedInterceptor(context)) throw error;
    const mapped = this.mapErrorSafely(error, context);
    if (mapped instanceof Promise) return mapped.then((value: unknown) => Promise.reject(value));
    throw mapped;
  }
}
