import type { FactoryProvider, ModuleMetadata, Type } from '@nestjs/common';
import type { BackendConfig } from '../../backends/backend-options.js';

/** Options of `DistributedLockModule.forRoot()`, or what a `forRootAsync()` factory returns. */
export interface DistributedLockModuleOptions {
  /**
   * Names this store, for an application that uses several (say Redis for request locks and etcd
   * for the few that must never be wrong): inject it with `@InjectLockService(name)`, lock in it
   * with `@Locked({ key, store: name })`. Events, metrics and health results carry it. Omitted: the
   * default store, whose `LockService` is injected by its class. With `forRootAsync()`, give it in
   * the argument, not in what the factory returns (the providers need it before the factory runs).
   */
  name?: string;
  /**
   * The lock store: `{ type: 'memory' }`, `{ type: 'redis', url }`, ... or your own object
   * implementing `LockBackend`. Clients the module creates from a `type` it also closes on
   * shutdown; a `LockBackend` object (like a client) you pass in is yours: the module releases its
   * locks on shutdown but never calls its `close()`, so several apps may share it.
   */
  backend: BackendConfig;
  /** Names this app instance to operators (lock holders, leaders). Default `hostname:pid`. */
  instance?: string;
  /** Prepended to every key in the store. Default `'lock:'`. */
  keyPrefix?: string;
  /** Lease length in ms, renewed automatically while the holder runs. Default 30 000. */
  leaseMs?: number;
  /**
   * How long `acquire()` and `@Locked()` wait for a busy lock, in ms; `0` = one attempt.
   * Default 10 000: long enough to queue behind a short critical section, short enough that an
   * HTTP caller gets a 409 before a typical gateway timeout.
   */
  waitMs?: number;
  /**
   * Caps every wait of this store, in ms: the default `waitMs` and each call's and decorator's own
   * (`@Locked({ waitMs: 2000 })` waits at most `maxWaitMs`). For tests, so a busy path answers at
   * once without editing the code under test (see docs/testing.md). Default: no cap.
   */
  maxWaitMs?: number;
  /**
   * Answer lock errors thrown anywhere in a request (a `@Locked()` service method, `withLock`,
   * `acquire`, a fence guard) as `@Locked()` handlers do: 409 `LockBusyException`, 503
   * `LockStoreUnavailableException`, 409 `StaleFenceException`, or each context's code (see
   * docs/errors.md). Default `true`. `false` leaves them to your own filters (Nest answers 500);
   * `@Locked()` handlers still answer theirs. One setting for the application: `false` on any of
   * its stores turns it off. It costs nothing either way: an exception filter runs only when a
   * call throws.
   */
  mapErrors?: boolean;
  /**
   * How long `app.close()` (SIGTERM with `enableShutdownHooks()`) lets the work already inside a
   * lock finish with it, in ms: `@Locked` requests still being answered (streams included) and
   * locked jobs. Meanwhile new locks are refused at once (HTTP 503 with `Retry-After`). Past it,
   * the holders' signals abort (LockLostError) and their locks are released. `0`: at once.
   * Default 10 000 (see docs/shutdown.md).
   */
  gracefulShutdownTimeoutMs?: number;
  /**
   * On `app.close()`, before the store drains: the HTTP server (Express or Fastify) stops listening
   * and closes its idle kept-alive connections, the requests it has received are answered with
   * `Connection: close`, and shutdown waits for them (at most `gracefulShutdownTimeoutMs`). No
   * request that reached this instance then meets the drain's refusals. One setting for the
   * application: `true` on any store. Default `false` (see docs/shutdown.md).
   */
  stopAcceptingOnShutdown?: boolean;
  /**
   * Register as a global module (default `true`). Read from the argument of `forRoot()` /
   * `forRootAsync()` only: an options factory's value comes too late to change it.
   */
  isGlobal?: boolean;
}

/** A class for `forRootAsync({ useClass })` / `useExisting`: Nest calls its `create()`. */
export interface DistributedLockOptionsFactory {
  /** The module options. */
  create(): DistributedLockModuleOptions | Promise<DistributedLockModuleOptions>;
}

/**
 * Argument of `DistributedLockModule.forRootAsync()`: `imports`, `inject` and one of `useFactory`,
 * `useClass` (a {@link DistributedLockOptionsFactory}) or `useExisting`; plus `name` and `isGlobal`
 * (default `true`).
 */
export interface DistributedLockModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** The store's name (see `DistributedLockModuleOptions.name`). */
  name?: string;
  /** Register the module globally (default `true`). */
  isGlobal?: boolean;
  /** See `DistributedLockModuleOptions.mapErrors` (here, or in what the factory returns). */
  mapErrors?: boolean;
  /** Builds the options from the `inject` providers. */
  useFactory?: (...args: any[]) => DistributedLockModuleOptions | Promise<DistributedLockModuleOptions>;
  /** Providers passed to `useFactory`. */
  inject?: FactoryProvider['inject'];
  /** A class Nest instantiates to call its `create()`. */
  useClass?: Type<DistributedLockOptionsFactory>;
  /** An existing provider whose `create()` gives the options. */
  useExisting?: Type<DistributedLockOptionsFactory>;
}
