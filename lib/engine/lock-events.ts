import type { LockHolder } from './lock-info.js';
import type { LockMode } from './lock-mode.js';

interface EventBase {
  /** The key as the caller gave it, without the prefix. */
  readonly key: string;
  readonly backend: string;
  /** The name of the store (the module's `name`; `'default'` for the unnamed one). */
  readonly store: string;
}

/** Why an acquisition failed, when the key was not simply busy (see the `acquire-failed` event). */
export type AcquireFailure = 'store-unavailable' | 'shutting-down';

/** Everything the engine reports, for logs and metrics. Subscribe through `LockService.events`. */
export type LockEvent =
  | (EventBase & {
      readonly type: 'acquired';
      readonly fence: number | undefined;
      readonly mode: LockMode;
      readonly waitedMs: number;
    })
  | (EventBase & { readonly type: 'released'; readonly fence: number | undefined; readonly heldMs: number })
  | (EventBase & { readonly type: 'extended'; readonly fence: number | undefined; readonly expiresAt: number })
  | (EventBase & { readonly type: 'extend-failed'; readonly fence: number | undefined; readonly error: Error })
  | (EventBase & {
      readonly type: 'lost';
      readonly fence: number | undefined;
      readonly heldMs: number;
      readonly error: Error;
    })
  /**
   * The store did not answer a release (`error`: LockBackendError): the holder is done (a `released`
   * event came first), but the store keeps the key until its lease lapses. Emitted whether or not
   * anyone awaits the release: also for the release after a streamed HTTP response, which nobody can.
   */
  | (EventBase & { readonly type: 'release-failed'; readonly fence: number | undefined; readonly error: Error })
  | (EventBase & { readonly type: 'timeout'; readonly waitedMs: number })
  /**
   * An acquisition failed for a reason other than a busy key (that is `timeout`): `reason`
   * `'store-unavailable'` when the store did not answer or refused (`error`: LockBackendError), or
   * `'shutting-down'` when this instance refused it because it is shutting down (`error`:
   * LockShuttingDownError: a deploy, not an outage; the store may be fine).
   */
  | (EventBase & { readonly type: 'acquire-failed'; readonly reason: AcquireFailure; readonly error: Error })
  /**
   * A `@Locked({ onBusy: 'skip' })` / `@LockedJob()` call did not run its method because another
   * holder had the key (for a job: another instance ran, or is running, this tick). `method` is
   * `'ClassName.methodName'`, `instance` this app instance's label.
   */
  | (EventBase & { readonly type: 'skipped'; readonly method: string; readonly instance: string })
  /**
   * A call has waited a while for a lock that this same call chain seems to hold: taken with
   * `acquire()` in the same scope and never entered with `run()`. It will wait until `waitMs`:
   * nested calls are re-entrant only inside `withLock`, `@Locked` or `run(lock, fn)`.
   */
  | (EventBase & { readonly type: 'self-wait'; readonly waitedMs: number })
  /**
   * An operator freed the key with `LockService.forceRelease` (or the CLI / admin page through it):
   * `by` is the instance that forced it, `actor` the operator who asked (when known), `evicted` the
   * holders it removed (instance, label, fence where the store knows them). Emitted by the engine
   * that forced it; the evicted holders learn it at their next renewal (signal aborts, `lost`).
   */
  | (EventBase & {
      readonly type: 'force-released';
      readonly by: string;
      readonly reason?: string;
      readonly actor?: string;
      readonly evicted: readonly LockHolder[];
    });

/** The `type` of a `LockEvent`. */
export type LockEventType = LockEvent['type'];
