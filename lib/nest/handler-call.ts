import { StreamableFile, type ExecutionContext } from '@nestjs/common';
import { finished, Stream } from 'node:stream';
import { findMark, runMarked, type ScopedLock } from '../engine/lock-scope.js';
import type { KeyParts } from './key-template.js';
import { LOCKED_METADATA } from './lock.constants.js';

/**
 * @internal One call of a handler by Nest, as a `LockedInterceptor` serves it. The handler's
 * `@Locked()` wrappers take their locks when Nest calls it (after guards, interceptors and pipes;
 * their keys may name the call's request or message) and leave them here. The interceptor releases
 * them once the response is complete: the handler's method has settled, what it returned has ended
 * (an Observable completed, errored or was unsubscribed), and a streamed HTTP body has been sent.
 */
export class HandlerCall {
  /** The locks of the handler, kept for all the code of the call (the handler, the stream it returned): current and re-entrant there. */
  private readonly locks: ScopedLock[] = [];
  /** Runs of the handler's method not settled yet: nothing is released before they are. */
  private running = 0;
  /** Resolves when `running` drops to 0, for an `end()` that came first (a timeout interceptor, a client that left). */
  private settled: { promise: Promise<void>; resolve: () => void } | undefined;
  private parts: KeyParts | undefined;
  private sent: Promise<void> | undefined;
  private ending: Promise<void> | undefined;
  /** Locks are no longer kept: the call ended, or was torn down before the handler ran. */
  private closed = false;

  constructor(
    readonly context: ExecutionContext,
    private readonly readParts: (context: ExecutionContext) => KeyParts,
  ) {}

  /** The call the current code runs in, if Nest is calling a handler through a `LockedInterceptor`. */
  static current(): HandlerCall | undefined {
    return findMark(HandlerCall);
  }

  /** Runs `fn` (which calls the handler) with this call findable from the handler and everything it calls. */
  run<T>(fn: () => T): T {
    return runMarked(this, this.locks, fn);
  }

  /** The request or message parts key templates name (`{params.x}`, `{data.x}`, `{args.x}`), read once. */
  keyParts(): KeyParts {
    return (this.parts ??= this.readParts(this.context));
  }

  /**
   * Whether the `@Locked()` method `name` (with these options), called on `self`, is the handler of
   * this call: the method itself, or the one it overrides, called through `super`.
   */
  isHandler(self: unknown, name: string | symbol, options: object): boolean {
    if (!(self instanceof this.context.getClass())) return false;
    const handler = this.context.getHandler();
    if (handler.name === name) return true;
    const recorded: unknown = Reflect.getMetadata(LOCKED_METADATA, handler);
    return Array.isArray(recorded) && recorded.includes(options);
  }

  /** A run of the handler's method starts: the locks are not released before its `exit()` (it settled). */
  enter(): void {
    this.running++;
  }

  exit(): void {
    if (--this.running === 0) this.settled?.resolve();
  }

  /** Keeps `lock` until the response is complete; false when the call has ended (the caller releases it itself). */
  keep(lock: ScopedLock): boolean {
    if (this.closed) return false;
    this.locks.push(lock);
    return true;
  }

  /** What the handler emitted is a body Nest streams after the call: the locks wait for this HTTP response to be over too. */
  noteEmitted(value: unknown, response: unknown): void {
    if (this.sent || !isStreamedBody(value)) return;
    const raw = (response as { raw?: unknown } | undefined)?.raw ?? response;
    if (raw instanceof Stream) this.sent = new Promise((resolve) => finished(raw as unknown as NodeJS.WritableStream, () => resolve()));
  }

  /** A streamed body is still being sent: the interceptor completes now and releases later. */
  get streaming(): boolean {
    return this.sent !== undefined;
  }

  /** Releases the kept locks, last taken first, once the method's runs settled and the body was sent. Rejects with the first release failure. */
  end(): Promise<void> {
    this.ending ??= this.running === 0 && this.sent === undefined && this.locks.length <= 1 ? this.endNow() : this.endOnce();
    return this.ending;
  }

  /** The common end (the method settled, no body to wait for, one lock or none): released at once, without a step of its own. */
  private endNow(): Promise<void> {
    this.closed = true;
    const lock = this.locks[0];
    return lock ? lock[Symbol.asyncDispose]() : Promise.resolve();
  }

  private async endOnce(): Promise<void> {
    if (this.running > 0) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.settled = { promise, resolve };
      await promise;
    }
    this.closed = true;
    if (this.sent) await this.sent;
    let failure: unknown;
    for (let i = this.locks.length - 1; i >= 0; i--) {
      await this.locks[i]![Symbol.asyncDispose]().catch((error: unknown) => (failure ??= error));
    }
    if (failure !== undefined) throw failure;
  }
}

/** A body Nest sends after the handler's Observable completed: a `StreamableFile`, a stream or async iterable, a web `Response`. */
function isStreamedBody(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (value instanceof StreamableFile || value instanceof Response) return true;
  return typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' && typeof (value as PromiseLike<unknown>).then !== 'function';
}
