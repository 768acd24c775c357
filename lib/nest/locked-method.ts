import { LockBackendError, LockTimeoutError } from '../errors.js';
import type { Lock, LockOptions } from '../engine/lock.js';
import { interceptedParts } from './intercepted-requests.js';
import { compileLockKey, type RequestParts } from './key-template.js';
import { lockRegistry } from './lock.registry.js';
import { toHttpError } from './lock-http-errors.js';
import { LockedCall } from './locked-call.js';
import type { LockedCallSlot } from './locked-call-slot.js';
import type { LockedOptions } from './locked.options.js';

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Wraps `original` so that each call acquires the lock once (for a key list: every key, all or
 * none), runs the method holding it (visible to `LockService.current()`, re-entrant for nested
 * calls) and releases it, even when it throws.
 *
 * Called by Nest as a route handler, it finds the request in `slot` (for `{params.x}` templates)
 * and answers lock errors as HTTP errors itself, unless a `LockedInterceptor` handles the request.
 * The wrapper is always async.
 */
export function createLockedMethod(original: Method, options: Readonly<LockedOptions>, where: string, slot: LockedCallSlot): Method {
  const resolveKey = compileLockKey(options.key, where);
  const { leaseMs, waitMs, mode, fair, permits } = options;
  const lockOptions: LockOptions = { leaseMs, waitMs, mode, fair, permits };
  const skipWhenBusy = options.onBusy === 'skip';

  async function run(self: unknown, args: unknown[], call: LockedCall | undefined): Promise<unknown> {
    try {
      const engine = lockRegistry.engineFor(self, where);
      const key = resolveKey(self, args, call && resolveKey.usesRequest ? (interceptedParts(call.request) ?? call.request) : undefined);
      let lock: Lock;
      try {
        lock = await engine.acquire(key, lockOptions);
      } catch (error) {
        if (skipWhenBusy && error instanceof LockTimeoutError) return undefined;
        throw error;
      }
      return await engine.runHolding(lock, () => original.apply(self, args));
    } catch (error) {
      throw call ? httpError(error, call) : error;
    }
  }

  const lockedMethod = function (this: unknown, ...args: unknown[]): Promise<unknown> {
    const call = args[slot.index];
    if (!(call instanceof LockedCall)) return run(this, args, undefined);
    return run(this, slot.argsFor(call, args), call.http ? call : undefined);
  };
  Object.defineProperty(lockedMethod, 'name', { value: original.name });
  return lockedMethod;
}

/** A lock error of a route handler as the client should see it; a `LockedInterceptor` handling the request maps it instead. */
function httpError(error: unknown, call: LockedCall): unknown {
  if (!(error instanceof LockTimeoutError || error instanceof LockBackendError)) return error;
  return interceptedParts(call.request) ? error : toHttpError(error, call.response);
}
