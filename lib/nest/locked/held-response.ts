import { StreamableFile } from '@nestjs/common';
import { finished } from 'node:stream';
import { isObservable, Observable } from 'rxjs';
import type { LockEngine } from '../../engine/lock-engine.js';
import type { ScopedLock } from '../../engine/lock-scope.js';
import { answerLockError } from '../errors/lock-error-answers.js';
import type { HandlerKind } from '../nest-metadata.js';

/** The lock of a handler call whose response is a stream: released once, when the response ends. */
interface Holder {
  readonly lock: ScopedLock;
  readonly engine: LockEngine;
  /** Releases the lock (once); a failure is reported by the engine (`release-failed`) and logged by `LockService`. */
  release(): Promise<void>;
}

/**
 * What a `@Locked()` handler returns, holding its lock until the response is complete when that is
 * a stream; `undefined` when it is a plain value (released at once by the caller).
 *
 * - An Observable (a microservice's streamed answer, SSE, a gateway's replies): the lock is the
 *   current one for its subscriber's code, and is released when it completes, errors or is
 *   unsubscribed (the client left). Its end is passed on only once the lock is released, so a
 *   client's next request never finds the key still taken by the one it was answered.
 * - Over HTTP, a body Nest streams after the handler returned (`StreamableFile`, a Node or web
 *   stream, a web `Response`, an async iterable): released when it has been read to its end, or
 *   destroyed or cancelled (the client left, the answer failed).
 *
 * An error of the Observable or of the release reaches the subscriber as a handler of `kind` answers it.
 */
export function holdResponse(result: unknown, lock: ScopedLock, engine: LockEngine, kind: HandlerKind): unknown {
  if (isObservable(result))
    return heldObservable(result, holderOf(lock, engine), (error) => answerLockError(error, kind));
  if (kind !== 'http') return undefined;
  const stream = streamOf(result);
  if (stream === undefined)
    return iterableOf(result) ? heldIterable(result as AsyncIterable<unknown>, holderOf(lock, engine)) : undefined;
  if (stream === null) return undefined;
  const holder = holderOf(lock, engine);
  finished(stream as NodeJS.ReadableStream, () => void holder.release().catch(ignore));
  return result;
}

/** Built only for a streamed response: a plain value's lock is released by the caller. */
function holderOf(lock: ScopedLock, engine: LockEngine): Holder {
  let released: Promise<void> | undefined;
  return { lock, engine, release: () => (released ??= lock[Symbol.asyncDispose]()) };
}

function heldObservable(
  source: Observable<unknown>,
  holder: Holder,
  fail: (error: unknown) => unknown,
): Observable<unknown> {
  return new Observable((subscriber) => {
    let ended = false;
    const deliver = (error: unknown) => {
      const answer = fail(error);
      if (answer instanceof Promise)
        answer.then(
          (value) => subscriber.error(value),
          (reason: unknown) => subscriber.error(reason),
        );
      else subscriber.error(answer);
    };
    const subscription = holder.engine.run(holder.lock, () =>
      source.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => {
          ended = true;
          void holder
            .release()
            .catch(ignore)
            .then(() => deliver(error));
        },
        complete: () => {
          ended = true;
          holder.release().then(() => subscriber.complete(), deliver);
        },
      }),
    );
    return () => {
      subscription.unsubscribe();
      if (!ended) void holder.release().catch(ignore);
    };
  });
}

/** An async iterable (not a stream) Nest streams: the same values, and the lock released when the iteration ends or is stopped. */
function heldIterable(source: AsyncIterable<unknown>, holder: Holder): AsyncIterable<unknown> {
  const done = <T>(value: T): T => {
    void holder.release().catch(ignore);
    return value;
  };
  return {
    [Symbol.asyncIterator]() {
      const iterator = source[Symbol.asyncIterator]();
      return {
        next: async (...args: [] | [unknown]) => {
          const result = await iterator.next(...args).catch((error: unknown) => Promise.reject(done(error)));
          return result.done ? done(result) : result;
        },
        return: async (value?: unknown) => done(await (iterator.return?.(value) ?? { done: true as const, value })),
        throw: async (error?: unknown) => done(await (iterator.throw?.(error) ?? Promise.reject(error))),
      };
    },
  };
}

/** The stream whose end ends a streamed HTTP body; `null` for a web `Response` without a body, `undefined` when `value` is not a stream. */
function streamOf(value: unknown): NodeJS.ReadableStream | ReadableStream | null | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (value instanceof StreamableFile) return value.getStream();
  if (Object.prototype.toString.call(value) === '[object Response]') return (value as Response).body;
  if (value instanceof ReadableStream) return value;
  const stream = value as { pipe?: unknown; on?: unknown };
  return typeof stream.pipe === 'function' && typeof stream.on === 'function'
    ? (value as NodeJS.ReadableStream)
    : undefined;
}

/** An async iterable that is not a thenable (a query builder can be both: it stands for its result). */
function iterableOf(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' &&
    typeof (value as PromiseLike<unknown>).then !== 'function'
  );
}

function ignore(): void {}
