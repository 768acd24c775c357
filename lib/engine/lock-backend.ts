import type { LockMode } from './lock-mode.js';
import type { LockInspection } from './lock-inspection.js';

/**
 * A lock store, seen from the engine.
 *
 * The engine owns everything that does not depend on the store: key validation and prefixing,
 * owner ids, waiting with a deadline, renewal timers and the local lease clock, re-entrancy,
 * lock-lost signalling, events and shutdown. A backend performs single operations on the store.
 *
 * Every acquisition gets its own {@link LockClaim} from {@link LockBackend.claim}. The claim lives
 * from the first attempt until `release()`, so stores that keep a place in a queue (ZooKeeper's
 * sequential nodes, etcd's create revisions, a fair Redis queue) keep it between attempts, and
 * stores whose liveness is a session or lease shared by all locks report loss through
 * {@link ClaimRequest.onLost}.
 *
 * To write a backend: implement this interface and pass the object as `backend` in the module
 * options. Verify it with `describeLockBackendContract` (from `nestjs-distributed-lock/backend`).
 */
export interface LockBackend {
  /** Short name used in errors and events, e.g. `'redis'`. */
  readonly name: string;
  /**
   * Where the store lives, for error messages: `host:port`, or several joined by `, `. Never a
   * user name or password. The engine appends it to the LockBackendError of a failed store call
   * (`[redis] Command timed out (at 10.0.0.5:6379)`). Omitted: errors name no address.
   */
  readonly address?: string;
  /**
   * The lock kinds this store implements beyond plain exclusive locks. The engine refuses the
   * others with InvalidLockArgumentError before calling `claim()`. Omitted: none.
   */
  readonly capabilities?: BackendCapabilities;
  /** Starts one acquisition. Must not do I/O: the engine calls `tryAcquire()` next. */
  claim(request: ClaimRequest): LockClaim;
  /** Lets operators look inside the store and force a lock free (`LockService.inspect`, `list`, `forceRelease`). */
  readonly inspection?: LockInspection;
  /** A cheap round trip to the store, for health checks. Rejects when the store is down. */
  ping?(): Promise<void>;
  /** Closes the clients this backend created (never the ones the user passed in). Called once, after held locks were released. */
  close(): Promise<void>;
}

/** What the engine asks a store for, once per acquisition. */
export interface ClaimRequest {
  /** The key in the store: the module's `keyPrefix` + the caller's key. */
  readonly key: string;
  /** Unique per acquisition: only this owner may renew or release. */
  readonly owner: string;
  /** Requested lease length in ms (an integer >= 1). */
  readonly leaseMs: number;
  /** `'exclusive'` (= `'write'`) or `'read'` (only asked of stores whose capabilities include `read`). */
  readonly mode: LockMode;
  /** Hand the lock over in arrival order (only asked of stores whose capabilities include `fair`). */
  readonly fair: boolean;
  /**
   * A counting semaphore with this many permits: the claim takes one permit, and at most
   * `permits` claims hold the key at once. `undefined` for a lock. Only asked of stores whose
   * capabilities include `semaphore`; a store keeps a key's semaphore apart from its lock.
   */
  readonly permits: number | undefined;
  /**
   * Call when the store says, on its own, that the lock is gone (session expired, lease revoked).
   * Safe to call at any time and more than once; ignored unless the claim holds the lock.
   */
  readonly onLost: (reason: string) => void;
}

/** One acquisition in a store, from its first attempt to its release: a queue-based store keeps its place between attempts. */
export interface LockClaim {
  /**
   * One attempt to take the lock; never waits for a holder. Rejects only when the store fails
   * (the engine turns that into `LockBackendError`).
   */
  tryAcquire(): Promise<AttemptResult>;
  /**
   * Resolves when the lock may have become free (release message, watch event), after at most
   * `maxMs`, or as soon as `signal` aborts. Never rejects. Spurious wake-ups are allowed: the
   * engine simply tries again.
   */
  waitForChange(maxMs: number, signal: AbortSignal): Promise<void>;
  /**
   * Extends the held lease to `leaseMs` from now. Resolves the new validity in ms (counted from
   * the start of the call), or `false` when this owner no longer holds the lock.
   */
  renew(leaseMs: number): Promise<number | false>;
  /**
   * For stores whose renewal sets when the lease ends (a TTL, an expiry column): the validity, as
   * `renew` would resolve it, of a lease of `leaseMs` the store counts from when it receives the
   * request. A renewal that shortens the lease may be applied even if its answer is lost, so the
   * engine counts the lease as ending by then from the moment it sends such a renewal. Omitted:
   * renewals never shorten what the store holds (a session or a shared lease keeps the lock).
   */
  validityFor?(leaseMs: number): number;
  /**
   * Drops whatever this claim has in the store: the lock if held, its place in a queue if
   * waiting. Resolves `false` only when the lock had been acquired and is no longer this owner's.
   *
   * With `holdMs` (only for exclusive locks, and only on stores whose capabilities include
   * `minHold`), a held lock is not freed at once: the key stays taken for `holdMs` more, counted by
   * the store from its own now, and then frees by itself with nothing left running. Waiters learn
   * the remainder from their busy answer (`holderTtlMs`) or a watch on the key.
   */
  release(holdMs?: number): Promise<boolean>;
}

/** What one `LockClaim.tryAcquire()` attempt found. */
export type AttemptResult = Acquired | Busy;

/** The claim holds the lock now. */
export interface Acquired {
  /** Always `true`. */
  readonly acquired: true;
  /** Strictly increasing per key over successive holders; `undefined` if the store cannot give one honestly. */
  readonly fence: number | undefined;
  /** How long the lock is surely held, counted from the start of `tryAcquire()`. */
  readonly validityMs: number;
}

/** Another holder has the key; the claim keeps its place in the store's queue, if it has one. */
export interface Busy {
  /** Always `false`. */
  readonly acquired: false;
  /** Time until the current holder's lease lapses, when the store knows it. */
  readonly holderTtlMs?: number;
}

/** What a store implements beyond exclusive locks (see {@link LockBackend.capabilities}). */
export interface BackendCapabilities {
  /** `mode: 'read'`: shared readers, exclusive writers, a waiting writer not starved by new readers. */
  readonly read?: boolean;
  /** `fair: true`: the lock goes to waiters in arrival order. Stores that always queue in order say so too. */
  readonly fair?: boolean;
  /** Counting semaphores (`LockService.semaphore`, `@Locked({ permits })`). */
  readonly semaphore?: boolean;
  /** `minHoldMs`: `LockClaim.release(holdMs)` keeps the key taken for `holdMs`, in the store, then lets it lapse. */
  readonly minHold?: boolean;
  /**
   * Every grant carries a fence, strictly increasing per key over successive holders. Leader election
   * requires it (a leader's term is its fence); a store that leaves it out (Redlock) is refused there.
   */
  readonly fenced?: boolean;
}
