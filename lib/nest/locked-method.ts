import { LockTimeoutError } from '../errors.js';
import type { LockOptions } from '../engine/lock.js';
import { currentHandlerContext } from './handler-context.js';
import { compileLockKey } from './key-template.js';
import { LOCKED_METADATA } from './lock.constants.js';
import { lockRegistry } from './lock.registry.js';
import type { LockedOptions } from './locked.options.js';

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Wraps `original` so that each call acquires the lock once (for a key list: every key, all or
 * none), runs the method holding it (visible to `LockService.current()`, re-entrant for nested
 * calls) and releases it, even when it throws.
 * The wrapper is always async.
 */
export function createLockedMethod(original: Method, options: Readonly<LockedOptions>, where: string): Method {
  const resolveKey = compileLockKey(options.key, where);
  const { leaseMs, waitMs, mode, fair, permits } = options;
  const lockOptions: LockOptions = { leaseMs, waitMs, mode, fair, permits };
  const skipWhenBusy = options.onBusy === 'skip';

  const lockedMethod = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
    const context = currentHandlerContext();
    const request = resolveKey.usesRequest && context && isHandledBy(context.handler, lockedMethod, options) ? context.request : undefined;
    const engine = lockRegistry.engineFor(this, where, context?.engine);
    const key = resolveKey(this, args, request);
    let lock;
    try {
      lock = await engine.acquire(key, lockOptions);
    } catch (error) {
      if (skipWhenBusy && error instanceof LockTimeoutError) return undefined;
      throw error;
    }
    return engine.runHolding(lock, () => original.apply(this, args));
  };
  Object.defineProperty(lockedMethod, 'name', { value: original.name });
  return lockedMethod;
}

/**
 * The route handler is this wrapper, or a wrapper that another decorator put around it and that
 * copied its metadata. A locked method that the handler merely calls does not see the request.
 */
function isHandledBy(handler: Function, lockedMethod: Function, options: Readonly<LockedOptions>): boolean {
  if (handler === lockedMethod) return true;
  const recorded: unknown = Reflect.getMetadata(LOCKED_METADATA, handler);
  return Array.isArray(recorded) && recorded.includes(options);
}
