import type { BackendConfig } from '../backends/backend-options.js';

/** Options of `DistributedLockModule.forRoot()`, or what a `forRootAsync()` factory returns. */
export interface DistributedLockModuleOptions {
  /**
   * The lock store: `{ type: 'memory' }`, `{ type: 'redis', url }`, ... or your own object
   * implementing `LockBackend`. Clients the module creates from a `type` it also closes on
   * shutdown; a `LockBackend` object (like a client) you pass in is yours: the module releases its
   * locks on shutdown but never calls its `close()`, so several apps may share it.
   */
  backend: BackendConfig;
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
   * Register as a global module (default `true`). Read from the argument of `forRoot()` /
   * `forRootAsync()` only: an options factory's value comes too late to change it.
   */
  isGlobal?: boolean;
}
