/**
 * Injection token of the default store's `LockEngine` (the store-independent lock logic that
 * `LockService` wraps). Inject it for health checks or to use the engine directly; a named store's
 * engine is `getLockEngineToken(name)`.
 */
export const LOCK_ENGINE = 'DISTRIBUTED_LOCK_ENGINE';

/**
 * Metadata key under which `@Locked()` records its options on the decorated method: an array of
 * `LockedOptions`, outermost decorator last. Read it with `Reflector.get(LOCKED_METADATA, handler)`.
 */
export const LOCKED_METADATA = 'distributed-lock:locked';

/** @internal Provided once per application by `DistributedLockModule`: `LockedInterceptor` looks for it at bootstrap. */
export const LOCK_MODULE_IMPORTED = 'DISTRIBUTED_LOCK_MODULE_IMPORTED';

/** The name of the store that `forRoot()` / `forRootAsync()` register when given no `name`. */
export const DEFAULT_STORE_NAME = 'default';
