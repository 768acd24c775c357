import { InvalidLockArgumentError } from '../errors.js';
import { copyMetadata } from './copy-metadata.js';
import type { LockKeys } from './key-template.js';
import { LOCKED_METADATA } from './lock.constants.js';
import { Messages } from './lock.messages.js';
import { lockedCallSlot } from './locked-call-slot.js';
import { createLockedMethod } from './locked-method.js';
import { parseLockedArgs, type LockedOptions } from './locked.options.js';

/**
 * Runs the method holding a distributed lock: one acquisition per call, released when the method
 * settles. Works on controller route handlers and on methods of any provider (services, `@Cron`
 * jobs, queue consumers), in any order with other decorators, whose metadata it keeps.
 *
 * - `key`: a template (`'order:{0.id}'` names argument 0's `id`; on route handlers
 *   `{params.x}`, `{query.x}`, `{body.x}`, `{headers.x}` name parts of the request; `{{`/`}}` are
 *   literal braces) or a function of the method's arguments. A template naming something missing
 *   throws InvalidLockArgumentError rather than locking a key with `undefined` in it. A list
 *   of keys (`['account:{0}', 'account:{1}']`) locks all of them or none, in sorted order, so
 *   calls naming the same keys in opposite orders cannot deadlock.
 * - Busy for `waitMs`: rejects LockTimeoutError (409 Conflict over HTTP, with `Retry-After`), or,
 *   with `onBusy: 'skip'`, resolves `undefined` without running the method. A store that cannot
 *   be reached is 503 over HTTP. A `LockedInterceptor` (subclass) registered for the route maps
 *   these errors instead.
 * - Inside the method, `LockService.current()` is the held lock (its `signal` aborts if it is lost,
 *   its `fence` guards writes), and locked calls on the same key are re-entrant.
 *
 * The decorated method becomes async. Bad arguments throw InvalidLockArgumentError when the
 * class is defined. On route handlers no interceptor is involved: the decorator adds a hidden
 * parameter (after the real ones) through which Nest hands the wrapper the request; the method
 * itself never sees it.
 *
 * @example
 * ```ts
 * @Post(':sku/reserve')
 * @Locked('inventory:{params.sku}')
 * reserve(@Param('sku') sku: string) { ... }
 *
 * @Locked({ key: ['account:{0}', 'account:{1}'] })
 * async transfer(from: string, to: string, amount: number) { ... }
 *
 * @Cron(CronExpression.EVERY_MINUTE)
 * @Locked({ key: 'jobs:report', onBusy: 'skip' })
 * async report() { ... }
 * ```
 */
export function Locked(key: LockKeys, leaseMs?: number, waitMs?: number): MethodDecorator;
export function Locked(options: LockedOptions): MethodDecorator;
export function Locked(...args: unknown[]): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const className = typeof target === 'function' ? target.name : target.constructor.name;
    const where = `${className}.${String(propertyKey)}`;
    const original: unknown = descriptor?.value;
    if (typeof original !== 'function') throw new InvalidLockArgumentError(Messages.notAMethod(where));
    const options = parseLockedArgs(args, where);
    const slot = lockedCallSlot(target, propertyKey, original);
    const lockedMethod = createLockedMethod(original as (...args: unknown[]) => unknown, options, where, slot);
    copyMetadata(original, lockedMethod);
    const recorded: unknown = Reflect.getOwnMetadata(LOCKED_METADATA, lockedMethod);
    Reflect.defineMetadata(LOCKED_METADATA, [...(Array.isArray(recorded) ? recorded : []), options], lockedMethod);
    descriptor.value = lockedMethod as typeof descriptor.value;
    return descriptor;
  };
}
