import { Inject } from '@nestjs/common';
import { DEFAULT_STORE_NAME, LOCK_ENGINE } from '../lock-constants.js';
import { LockService } from '../lock-service.js';

/** Whether `name` means the default store (its tokens are the plain classes and constants). */
export const isDefaultStore = (name: string | undefined): boolean => name === undefined || name === DEFAULT_STORE_NAME;

/** Injection token of the `LockService` of the store `name`: the `LockService` class itself for the default (unnamed) store. */
export function getLockServiceToken(name?: string): string | typeof LockService {
  return isDefaultStore(name) ? LockService : `DistributedLockService:${name}`;
}

/** Injection token of the `LockEngine` of the store `name` (`LOCK_ENGINE` for the default store). */
export function getLockEngineToken(name?: string): string {
  return isDefaultStore(name) ? LOCK_ENGINE : `${LOCK_ENGINE}:${name}`;
}

/** Injection token of the options of the store `name`, as `forRoot()` got them or `forRootAsync()`'s factory made them. */
export function getLockModuleOptionsToken(name?: string): string {
  return isDefaultStore(name) ? 'DISTRIBUTED_LOCK_MODULE_OPTIONS' : `DISTRIBUTED_LOCK_MODULE_OPTIONS:${name}`;
}

/** @internal The store itself (its engine and shutdown). */
export function getLockStoreToken(name?: string): string {
  return isDefaultStore(name) ? 'DISTRIBUTED_LOCK_STORE' : `DISTRIBUTED_LOCK_STORE:${name}`;
}

/** Injection token of the default store's module options. */
export const DISTRIBUTED_LOCK_MODULE_OPTIONS = getLockModuleOptionsToken();

/**
 * Injects the `LockService` of a named store (from `DistributedLockModule.forRoot({ name })`);
 * without a name, the default store's (the same as injecting `LockService`).
 *
 * ```ts
 * constructor(@InjectLockService('critical') private readonly critical: LockService) {}
 * ```
 */
export const InjectLockService = (name?: string): ParameterDecorator & PropertyDecorator =>
  Inject(getLockServiceToken(name));
