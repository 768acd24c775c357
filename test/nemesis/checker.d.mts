/** One recorded event. Times are ms on one monotonic clock for the whole history. */
export interface HistoryEvent {
  /** The client process (its index), or 'nemesis' for a fault. */
  process: number | 'nemesis';
  /** An operation's invocation and completion (ok: took effect; fail: did not; info: unknown, as Jepsen's), or a one-off event. */
  type: 'invoke' | 'ok' | 'fail' | 'info' | 'event';
  /** acquire, release, write (guarded or canary), lost (the lock's signal aborted), exit; nemesis: pause, resume, kill, partition, heal, restart, restarted, kill-master, promoted, serving (an isolated member's peers serve again with a leader). */
  f: string;
  time: number;
  fence?: number;
  resource?: 'guarded' | 'canary';
  /** A write: the value read before it, and the value (and fence) the resource held just before it was applied. */
  read?: number;
  prior?: number;
  priorFence?: number;
  error?: string;
  /** A nemesis event's client. */
  target?: number;
  /** A failed acquire: a timer the client set at the invocation, due at waitMs + 100 ms, had run before the answer came. */
  pastBound?: boolean;
  [more: string]: unknown;
}

export interface History {
  meta: Record<string, unknown>;
  events: HistoryEvent[];
}

export interface Violation {
  kind:
    | 'overlap'
    | 'fence-regression'
    | 'reentry-fence-changed'
    | 'release-by-non-holder'
    | 'guarded-lost-update'
    | 'guarded-stale-write';
  process: number;
  time: number;
  [detail: string]: unknown;
}

export interface Recovery {
  f: string;
  time: number;
  target?: number;
  /** From the heal to the next acquisition by any client, and by the client that was cut off (null: none, or no client was). */
  anyMs: number | null;
  targetMs: number | null;
  /** From the heal to the cut-off client's first answer from the store (an acquisition or release that took effect, or "busy"); null: none, or no client was cut off. */
  answerMs: number | null;
}

export interface CheckReport {
  meta: Record<string, unknown>;
  operations: number;
  acquisitions: number;
  acquireFailed: number;
  acquireIndeterminate: number;
  releases: number;
  guardedAccepted: number;
  guardedRefused: number;
  guardedIndeterminate: number;
  canaryWrites: number;
  violations: Violation[];
  violationCount: number;
  /** Lost updates and writes after a lost lock of the unguarded canary: must be > 0 under a fault that bites. */
  canaryAnomalies: number;
  canary: { lostUpdates: number; writesAfterLoss: number };
  longestOverlapMs: number;
  /**
   * Over holders that ended by their lost signal: how long before the next holder's acquisition it
   * fired. Leaves out (into `freedByHolderMargins`) a next acquisition after the signal of a holder
   * whose requests still reached the store (not cut off, or only its replies lost): the library
   * frees the key on a lost signal, so that next holder may owe the key to the release, not to the lease's expiry.
   */
  minLostMarginMs: number | null;
  lostMargins: number[];
  /** The same margins counted from each lease's local deadline (the signal's time less its `lateMs`): what the library promised, apart from late timers. */
  minDueLostMarginMs: number | null;
  dueLostMargins: number[];
  /** How late, at most, a counted lost signal fired after its lease's local deadline (the event loop ran the timer late). */
  longestLostLateMs: number | null;
  freedByHolderMargins: number[];
  longestWithoutHolderMs: number;
  /** From invocation to answer, the longest acquire that failed or was indeterminate (not aborted by the run's end). */
  longestFailedAcquireMs: number | null;
  /** Failed or indeterminate acquires (not aborted by the run's end) whose client saw a timer due at the wait's bound run before the answer. */
  acquiresPastWaitBound: number;
  recoveries: Recovery[];
}

export function checkHistory(history: History): CheckReport;

/** The clock-drift allowance of a lease as the library documents it: lease x 0.01 + 2 ms. */
export function driftAllowanceMs(leaseMs: number): number;
