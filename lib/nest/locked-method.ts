import { Logger } from '@nestjs/common';
import { isObservable } from 'rxjs';
import { LockTimeoutError } from '../errors.js';
import type { LockEngine } from '../engine/lock-engine.js';
import type { LockOptions } from '../engine/lock.js';
import type { ScopedLock } from '../engine/lock-scope.js';
import { HandlerCall } from './handler-call.js';
import { compileLockKey } from './key-template.js';
import { Messages } from './lock.messages.js';
import { lockRegistry } from './lock.registry.js';
import type { CheckedLockedOptions } from './locked.options.js';

type Method = (this: unknown, ...args: unknown[]) => unknown;

const logger = new Logger('DistributedLock');

/**
 * Wraps `original` so that each call holds the lock (for a key list: every key, all or none),
 * visible to `LockService.current()` and re-entrant for nested calls, taken once per call.
 *
 * - Called by Nest as a handler (through the `LockedInterceptor` `@Locked()` attaches): the key may
 *   name the call's request or message; the lock is left to the interceptor, which releases it when
 *   the response is complete (streams included).
 * - Called any other way (a service method, a cron job, a unit test calling a controller): the lock
 *   is released when the method settles. A key naming request parts cannot be built then. A
 *   controller method called directly outside any handler call (a unit test, an override calling
 *   `super`) runs without the lock, as it would without any interceptor, and a warning says so;
 *   anywhere else (a provider's method, or any method called within another handler's call) it is
 *   an InvalidLockArgumentError.
 *
 * The wrapper is always async, and keeps the method's name and `length`.
 */
export function createLockedMethod(original: Method, options: CheckedLockedOptions, where: string, name: string | symbol): Method {
  const resolveKey = compileLockKey(options.key, where);
  const { leaseMs, waitMs, mode, fair, permits, store, minHoldMs, maxHoldMs } = options;
  const baseOptions: LockOptions = { leaseMs, waitMs, mode, fair, permits, minHoldMs, maxHoldMs };
  const labelOf = options.label === undefined ? undefined : compileLabel(options.label, where);
  /** The options of one call: the shared object unless a label is resolved from its arguments. */
  const optionsFor = (self: unknown, args: unknown[], call: HandlerCall | undefined): LockOptions =>
    labelOf ? { ...baseOptions, label: labelOf(self, args, call) } : baseOptions;
  const skipWhenBusy = options.onBusy === 'skip';
  let warnedUnguarded = false;
  let warnedStream = false;

  /** Resolves `undefined` when busy and `onBusy: 'skip'`. */
  async function acquire(engine: LockEngine, key: string | string[], lockOptions: LockOptions): Promise<ScopedLock | undefined> {
    try {
      return await engine.acquireScoped(key, lockOptions);
    } catch (error) {
      if (skipWhenBusy && error instanceof LockTimeoutError) return skipped(engine, key, where);
      throw error;
    }
  }

  /** One async step for the whole handler run (this is every request's path): acquire, keep, run, settle. */
  async function runForHandler(self: unknown, args: unknown[], call: HandlerCall): Promise<unknown> {
    call.enter();
    try {
      const engine = lockRegistry.engineFor(self, where, store);
      let lock: ScopedLock;
      const key = resolveKey(self, args, resolveKey.usesContext ? call.keyParts() : undefined);
      try {
        lock = await engine.acquireScoped(key, optionsFor(self, args, call));
      } catch (error) {
        if (skipWhenBusy && error instanceof LockTimeoutError) return skipped(engine, key, where);
        throw error;
      }
      // Kept by the call: current and re-entrant for the handler and the stream it returns, released when the response is complete.
      if (call.keep(lock)) return await original.apply(self, args);
      // The call ended already (torn down while pipes ran): the lock covers the method's own run.
      return await engine.runHolding(lock, () => original.apply(self, args));
    } finally {
      call.exit();
    }
  }

  async function runAlone(self: unknown, args: unknown[]): Promise<unknown> {
    if (resolveKey.usesContext && !HandlerCall.current() && !lockRegistry.isProvider(self)) {
      if (!warnedUnguarded) logger.warn(Messages.ranUnguarded(where, describeKey(options.key)));
      warnedUnguarded = true;
      return original.apply(self, args);
    }
    const engine = lockRegistry.engineFor(self, where, store);
    const lock = await acquire(engine, resolveKey(self, args, undefined), optionsFor(self, args, undefined));
    if (!lock) return undefined;
    const result = await engine.runHolding(lock, () => original.apply(self, args));
    if (!warnedStream && isStream(result)) {
      warnedStream = true;
      logger.warn(Messages.streamFromMethod(where));
    }
    return result;
  }

  const lockedMethod = function (this: unknown, ...args: unknown[]): Promise<unknown> {
    const call = HandlerCall.current();
    return call?.isHandler(this, name, options) ? runForHandler(this, args, call) : runAlone(this, args);
  };
  Object.defineProperty(lockedMethod, 'name', { value: original.name });
  Object.defineProperty(lockedMethod, 'length', { value: original.length });
  return lockedMethod;
}

/** A label resolver that never throws: a template naming something missing yields the template text. */
function compileLabel(label: unknown, where: string): (self: unknown, args: unknown[], call: HandlerCall | undefined) => string {
  const resolve = compileLockKey(label, where);
  const fallback = typeof label === 'string' ? label : 'label function failed';
  return (self, args, call) => {
    try {
      const value = resolve(self, args, resolve.usesContext ? call?.keyParts() : undefined);
      return Array.isArray(value) ? value.join(',') : value;
    } catch {
      return fallback;
    }
  };
}

/** `onBusy: 'skip'`: the method does not run; a `skipped` event says so. */
function skipped(engine: LockEngine, key: string | string[], where: string): undefined {
  engine.noteSkipped(Array.isArray(key) ? key.join(',') : key, where);
  return undefined;
}

function isStream(value: unknown): boolean {
  return isObservable(value) || (typeof value === 'object' && value !== null && typeof (value as { pipe?: unknown }).pipe === 'function' && typeof (value as { on?: unknown }).on === 'function');
}

function describeKey(key: unknown): string {
  return Array.isArray(key) ? JSON.stringify(key) : typeof key === 'string' ? JSON.stringify(key) : 'function';
}
