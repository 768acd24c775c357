import { Logger } from '@nestjs/common';
import { isObservable } from 'rxjs';
import { LockLostError, LockTimeoutError } from '../../errors.js';
import type { LockEngine } from '../../engine/lock-engine.js';
import type { ScopedLock } from '../../engine/lock-scope.js';
import { answerLockError } from '../errors/lock-error-answers.js';
import { Messages } from '../lock-messages.js';
import { holdResponse } from './held-response.js';
import { parseLockKey } from './key-template.js';
import { lockRegistry } from './lock-registry.js';
import type { CheckedLockedOptions } from './locked-options.js';
import { planLockedMethod, type LockedMethodPlan } from './locked-method-plan.js';
import type { HandlerKind } from '../nest-metadata.js';

type Method = (this: unknown, ...args: unknown[]) => unknown;

const logger = new Logger('DistributedLock');

/** Every `@Locked()` wrapper and how to check it: the store's explorer checks those of the application's classes at bootstrap. */
const preparers = new WeakMap<Function, () => LockedMethodPlan>();

/** @internal Checks a `@Locked()` method (its key templates against its parameters) and returns its plan; undefined for any other function. */
export function prepareLockedMethod(method: unknown): LockedMethodPlan | undefined {
  return typeof method === 'function' ? preparers.get(method)?.() : undefined;
}

/**
 * Wraps `original` so that each call holds the lock (for a key list: every key, all or none),
 * visible to `LockService.current()` and re-entrant for nested calls, taken once per call, after
 * Nest's guards, interceptors and pipes when Nest calls it.
 *
 * - A method Nest calls as a handler (a route, a message or GraphQL handler, by its metadata): the
 *   key may name parts of the request or message (`{params.id}`), read from the parameters that
 *   carry them; a streamed response (Observable, SSE, `StreamableFile`...) keeps the lock until it
 *   ends; lock errors are answered in the context's terms (`LockBusyException`...).
 * - Any other method (a service, a cron job): released when the method settles; errors as thrown.
 *
 * The wrapper is always async, and keeps the method's name and `length`.
 */
export function createLockedMethod(
  original: Method,
  options: CheckedLockedOptions,
  where: string,
  target: object,
  name: string | symbol,
): Method {
  const declaringClass = typeof target === 'function' ? target : target.constructor;
  const parsedKey = parseLockKey(options.key, where);
  const parsedLabel = options.label === undefined ? undefined : parseLockKey(options.label, where);
  const skipWhenBusy = options.onBusy === 'skip';
  let plan: LockedMethodPlan | undefined;
  let warnedStream = false;

  /** One call: acquire, run, and release (a streamed response: when it ends). */
  async function call(
    self: unknown,
    args: unknown[],
    { kind, resolveKey, optionsFor }: LockedMethodPlan,
  ): Promise<unknown> {
    const engine = lockRegistry.engineFor(self, where, options.store);
    let key: string | string[] | undefined;
    let lock: ScopedLock;
    try {
      key = resolveKey(self, args);
      lock = await engine.acquireScoped(key, optionsFor(engine, self, args));
    } catch (error) {
      if (skipWhenBusy && error instanceof LockTimeoutError) return skipped(engine, key!, where);
      throw await answer(error, kind);
    }
    let result: unknown;
    try {
      result = await engine.run(lock, () => original.apply(self, args));
    } catch (error) {
      await lock[Symbol.asyncDispose]().catch(() => undefined);
      throw await answer(error, kind);
    }
    if (kind !== undefined) {
      const held = holdResponse(result, lock, engine, kind);
      if (held !== undefined) return held;
    } else if (!warnedStream && isStream(result)) {
      warnedStream = true;
      logger.warn(Messages.streamFromMethod(where));
    }
    try {
      await lock.release();
    } catch (error) {
      // A loss was already signalled (signal, event), so it is not thrown here; a store failure on release is.
      if (!(error instanceof LockLostError)) throw await answer(error, kind);
    }
    return result;
  }

  const lockedMethod = function (this: unknown, ...args: unknown[]): Promise<unknown> {
    try {
      return call(this, args, (plan ??= prepare()));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const prepare = () => planLockedMethod({ target, declaringClass, name, where, options, parsedKey, parsedLabel });
  preparers.set(lockedMethod, () => (plan ??= prepare()));
  Object.defineProperty(lockedMethod, 'name', { value: original.name });
  Object.defineProperty(lockedMethod, 'length', { value: original.length });
  return lockedMethod;
}

/** What the caller of a handler of `kind` sees of `error` (a lock error in its context's terms); any other method's caller, the error. */
function answer(error: unknown, kind: HandlerKind | undefined): unknown {
  return kind === undefined ? error : answerLockError(error, kind);
}

/** `onBusy: 'skip'`: the method does not run; a `skipped` event says so. */
function skipped(engine: LockEngine, key: string | string[], where: string): undefined {
  engine.noteSkipped(Array.isArray(key) ? key.join(',') : key, where);
  return undefined;
}

function isStream(value: unknown): boolean {
  return (
    isObservable(value) ||
    (typeof value === 'object' &&
      value !== null &&
      typeof (value as { pipe?: unknown }).pipe === 'function' &&
      typeof (value as { on?: unknown }).on === 'function')
  );
}
