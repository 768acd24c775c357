import { UseFilters } from '@nestjs/common';
import { InvalidLockArgumentError } from '../../errors.js';
import { LOCKED_METADATA } from '../lock-constants.js';
import { Messages } from '../lock-messages.js';
import { copyMetadata } from './copy-metadata.js';
import type { LockKeys } from './key-template.js';
import { LockModuleCheck } from './lock-module-check.js';
import { createLockedMethod } from './locked-method.js';
import { parseLockedArgs, type LockedOptions } from './locked-options.js';

/**
 * Runs the method holding a distributed lock, taken once per call, inside the method: on a
 * handler Nest calls (an HTTP route, a microservice or WebSocket message, a GraphQL resolver),
 * after guards, interceptors and pipes, and until the response is complete when it is a stream
 * (Observable, SSE, `StreamableFile`); on any other method (services, `@Cron` jobs, queue
 * consumers) until the method settles. It adds no parameter and no interceptor, and keeps the
 * method's other metadata and its `name`, in any order with other decorators.
 *
 * - `key`: a template (`'order:{0.id}'` names argument 0's `id`, as the method receives it, after
 *   pipes; on handlers `{params.x}`, `{query.x}`, `{body.x}`, `{headers.x}` name parts of the HTTP
 *   request, `{data.x}` the payload of a microservice or WebSocket message, `{args.x}` GraphQL
 *   arguments, each read from the parameter that carries it (`@Param('x')`, `@Body()`, `@Req()`,
 *   `@Payload()`, `@MessageBody()`, `@Args()`), so a template naming a part no parameter carries
 *   fails the application's bootstrap, saying what to add; `{{`/`}}` are literal braces) or a
 *   function of the method's arguments. A template naming something missing in a call throws
 *   InvalidLockArgumentError rather than locking a key with `undefined` in it. A list of keys (`['account:{0}', 'account:{1}']`) locks all of them or none,
 *   in sorted order, so calls naming the same keys in opposite orders cannot deadlock.
 * - Busy for `waitMs`: rejects LockTimeoutError (on handlers: 409 Conflict with `Retry-After`, or
 *   code `LOCK_BUSY` outside HTTP), or, with `onBusy: 'skip'`, resolves `undefined` without running
 *   the method. A store that cannot be reached: 503, or `LOCK_STORE_UNAVAILABLE`.
 * - No key (`@Locked()`, or options without `key`): the key is `'ClassName.methodName'`, of the class
 *   that declares the method; refused (InvalidLockArgumentError) on an anonymous class or a symbol-named method.
 * - `minHoldMs` / `maxHoldMs`: hold at least / at most (see `LockOptions`); for scheduled jobs see `@LockedJob()`.
 * - `store`: the name of a `DistributedLockModule.forRoot({ name })` to lock in; default the unnamed one.
 * - Inside the method, `LockService.current()` is the held lock (its `signal` aborts if it is lost,
 *   its `fence` guards writes), and locked calls on the same key are re-entrant.
 *
 * It records its options under `LOCKED_METADATA`, and puts on the method an exception filter that
 * catches nothing and checks, at bootstrap, that the application imports `DistributedLockModule`.
 * The decorated method becomes async. Bad arguments throw InvalidLockArgumentError when the class
 * is defined.
 *
 * @example
 * ```ts
 * @Post(':sku/reserve')
 * @Locked('inventory:{params.sku}')
 * reserve(@Param('sku') sku: string) { ... }
 *
 * @Locked({ key: ['account:{0}', 'account:{1}'] })
 * async transfer(from: string, to: string, amount: number) { ... }
 * ```
 */
export function Locked(key?: LockKeys, leaseMs?: number, waitMs?: number): MethodDecorator;
export function Locked(options: LockedOptions): MethodDecorator;
export function Locked(...args: unknown[]): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const className = typeof target === 'function' ? target.name : target.constructor.name;
    const where = `${className}.${String(propertyKey)}`;
    const original: unknown = descriptor?.value;
    if (typeof original !== 'function') throw new InvalidLockArgumentError(Messages.notAMethod(where));
    // 'ClassName.methodName' names one method unless the class has no name or the method is a symbol.
    const defaultKey = className && typeof propertyKey === 'string' ? where : undefined;
    const options = parseLockedArgs(args, where, defaultKey);
    const lockedMethod = createLockedMethod(
      original as (...args: unknown[]) => unknown,
      options,
      where,
      target,
      propertyKey,
    );
    copyMetadata(original, lockedMethod);
    const recorded: unknown = Reflect.getOwnMetadata(LOCKED_METADATA, lockedMethod);
    Reflect.defineMetadata(
      LOCKED_METADATA,
      [...(Array.isArray(recorded) ? (recorded as unknown[]) : []), options],
      lockedMethod,
    );
    descriptor.value = lockedMethod as typeof descriptor.value;
    UseFilters(LockModuleCheck)(target, propertyKey, descriptor);
    return descriptor;
  };
}
