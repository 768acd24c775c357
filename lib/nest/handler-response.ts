import type { CallHandler, ExecutionContext } from '@nestjs/common';
import type { Observer, Subscriber, Subscription, Unsubscribable } from 'rxjs';
import type { HandlerCall } from './handler-call.js';

type Fail = (subscriber: Subscriber<unknown>, error: unknown, context: ExecutionContext) => void;

/**
 * @internal What a `LockedInterceptor` returns to Nest for one handler call: it passes on what the
 * handler emits, and its end (complete or error) only once the call's locks are released, so the
 * response is not over before the lock is. One object per call, the observer of the handler's
 * Observable and the teardown of Nest's subscription at once.
 */
export class HandlerResponse implements Observer<unknown>, Unsubscribable {
  private inner: Subscription | undefined;
  private ended = false;

  constructor(
    private readonly call: HandlerCall,
    private readonly subscriber: Subscriber<unknown>,
    /** The HTTP response (for a streamed body), undefined in other contexts. */
    private readonly response: unknown,
    private readonly fail: Fail,
  ) {}

  /** Subscribes to the handler with the call findable from it (and the locks it takes kept); returns the teardown. */
  start(next: CallHandler): Unsubscribable {
    this.inner = this.call.run(() => next.handle().subscribe(this));
    return this;
  }

  next(value: unknown): void {
    if (this.response !== undefined) this.call.noteEmitted(value, this.response);
    this.subscriber.next(value);
  }

  error(error: unknown): void {
    this.ended = true;
    void this.failAfterRelease(error);
  }

  complete(): void {
    this.ended = true;
    if (this.call.streaming) {
      this.subscriber.complete();
      // Nobody awaits this release: a failure is reported by the engine (a `release-failed` or `lost` event) and logged by LockService.
      this.call.end().catch(ignore);
      return;
    }
    this.completeAfterRelease();
  }

  /** Torn down early (a timeout interceptor, a client that left): released once the method settled, so no other call gets in while it runs. */
  unsubscribe(): void {
    this.inner?.unsubscribe();
    if (!this.ended) this.call.end().catch(ignore);
  }

  private async failAfterRelease(error: unknown): Promise<void> {
    await this.call.end().catch(ignore);
    this.fail(this.subscriber, error, this.call.context);
  }

  private completeAfterRelease(): void {
    this.call.end().then(this.completed, this.releaseFailed);
  }

  private readonly completed = (): void => this.subscriber.complete();

  private readonly releaseFailed = (error: unknown): void => this.fail(this.subscriber, error, this.call.context);
}

function ignore(): void {}
