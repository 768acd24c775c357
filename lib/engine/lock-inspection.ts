/**
 * What a store can tell operators about its locks, and the one operator action: force release.
 * Optional on a {@link LockBackend} (`inspection`); every built-in backend has it. Keys here are
 * store keys (the module's `keyPrefix` + the caller's key); owners are owner ids as the claims
 * stored them (the engine reads the holder's instance and label from them).
 */
export interface LockInspection {
  /** The key's holders and waiters, as the store sees them now. One bounded read. */
  inspect(storeKey: string): Promise<StoredLockState>;
  /**
   * One page of keys starting with `prefix` that are held (or waited for), at most `limit` of them,
   * from `cursor` (a previous page's). Bounded in cost: never reads the whole store at once.
   * `cursor` is absent on the last page. A page may hold fewer than `limit` locks before the end.
   */
  list(request: ListRequest): Promise<ListPage>;
  /**
   * Frees the key whoever holds it (lock and semaphore permits), keeping the fence counter so the
   * next holder's fence is larger, and wakes its waiters. Resolves the holders it evicted.
   */
  forceRelease(storeKey: string): Promise<StoredHolder[]>;
}

/** A holder as the store keeps it; the engine decodes `owner` into instance, label and age. */
export interface StoredHolder {
  /** The owner id stored with the lock; absent where the store keeps none (or only its hash). */
  readonly owner?: string;
  /** The holder's fence, where the store keeps one per holder. */
  readonly fence?: number;
  /** Remaining lease by the store's clock (etcd: its lease's TTL, in whole seconds); absent where liveness is a session (ZooKeeper). */
  readonly expiresInMs?: number;
  /** A permit of the key's counting semaphore, not its lock. */
  readonly permit?: boolean;
}

/** One claim queued for a key. */
export interface StoredWaiter {
  /** The owner id the claim queued with; absent where the store keeps none. */
  readonly owner?: string;
}

/** Most waiters a state reports (`waiting` counts them all): a long queue stays one bounded read. */
export const MAX_REPORTED_WAITERS = 100;

/** What the store keeps of one key. */
export interface StoredLockState {
  /** The key in the store, `keyPrefix` included. */
  readonly storeKey: string;
  /** `'read'` when readers hold it; `'exclusive'` for an exclusive or write holder. */
  readonly mode?: 'exclusive' | 'read';
  /** Its holders: lock holders and semaphore permits. */
  readonly holders: readonly StoredHolder[];
  /** Claims queued for the key, where the store keeps a queue. */
  readonly waiting?: number;
  /**
   * The first (at most 100) claims queued for the key, in queue order (the
   * next to be served first), where the store keeps a queue with the claims' owner ids.
   */
  readonly waiters?: readonly StoredWaiter[];
  /** The key's counting semaphore, when it has permits taken: `permits` where the store keeps it. */
  readonly semaphore?: { readonly used: number; readonly permits?: number };
}

/** One bounded page of keys, as `LockInspection.list` is asked for it. */
export interface ListRequest {
  /** Store-key prefix: the module's `keyPrefix` + the caller's prefix. */
  readonly prefix: string;
  /** At most this many locks (1 to 1000). */
  readonly limit: number;
  /** Where the previous page ended. */
  readonly cursor?: string;
}

/** One page of held or waited-for keys. */
export interface ListPage {
  /** The keys of this page. */
  readonly locks: readonly StoredLockState[];
  /** Where the next page starts; absent on the last page. */
  readonly cursor?: string;
}

/** Whether a state is worth listing: someone holds or waits for the key. */
export function isBusyState(state: StoredLockState): boolean {
  return state.holders.length > 0 || (state.waiting ?? 0) > 0;
}
