/** One lock row as an acquisition writes it. */
export interface LeaseRow {
  /** sha256 hex of the store key: the primary key. */
  readonly keyHash: string;
  /** The start of the key, for people reading the table. */
  readonly displayKey: string;
  readonly owner: string;
}

/**
 * A waiter's place in the line for a key, kept by its claim from one attempt to the next. A dialect
 * whose waiters poll (MySQL) keeps them in order with it; one that notifies them ignores it.
 */
export interface WaitPlace {
  /** The database clock (µs) at this claim's first busy attempt: its place in the line. */
  sinceUs: number | undefined;
  /** The database holds this claim as the next in line: once the key is free, it alone may take it. */
  next: boolean;
}

/** What one acquisition attempt found. */
export type TakeResult =
  | { readonly taken: true; readonly fence: number }
  | { readonly taken: false; readonly holderTtlMs: number | undefined };

/**
 * Wakes waiters when a lock is released elsewhere (PostgreSQL LISTEN/NOTIFY). Stores without
 * notifications have none and their waiters poll.
 */
export interface ReleaseNotifier {
  /**
   * Registers a waiter for `keyHash`. Each release wakes ONE waiter of this backend for that key
   * (the longest waiting), not all of them. Call the returned function when done waiting, with
   * `passOn` true if the last wake was not used for an attempt, so the next waiter gets it.
   */
  subscribe(keyHash: string, wake: () => void): (passOn: boolean) => void;
  /** Whether notifications flow right now; starts (re)connecting when they do not. */
  isListening(): boolean;
  close(): Promise<void>;
}

/**
 * The statements one SQL database needs. Each method is one short statement (two for MySQL's
 * acquire) in autocommit mode: no transaction stays open while the holder's code runs, and every
 * expiry is judged by the database's own clock.
 */
export interface SqlDialect {
  /** Creates the lease table if it is absent. Idempotent, and safe when several instances start at once. */
  ensureTable(): Promise<void>;
  /**
   * Takes the row when it is absent, free or expired (and, where waiters are kept in line, no
   * other waiter is next), with the fence max(previous + 1, database clock in µs); otherwise
   * reports the holder's remaining lease, and updates `place`.
   */
  take(row: LeaseRow, leaseMs: number, place: WaitPlace): Promise<TakeResult>;
  /** A waiter that gives up leaves its place in line (dialects that keep one). */
  leaveLine?(keyHash: string, owner: string): Promise<void>;
  /** Extends the lease to `leaseMs` from the database's now, if `owner` still holds it unexpired. */
  renew(keyHash: string, owner: string, leaseMs: number): Promise<boolean>;
  /** Frees the row (owner NULL, fence kept) if `owner` still holds it unexpired. */
  release(keyHash: string, owner: string): Promise<boolean>;
  /**
   * Deletes at most `limit` rows whose lease ended more than `idleKeyTtlMs` ago and whose fence the
   * database clock (in µs) passed by as much; one bounded statement that skips or waits for no held
   * row. Resolves how many rows went.
   */
  pruneIdleRows(idleKeyTtlMs: number, limit: number): Promise<number>;
  ping(): Promise<void>;
  /** Closes the connections this dialect created (never a pool the user passed in). */
  close(): Promise<void>;
  readonly notifier?: ReleaseNotifier;
}
