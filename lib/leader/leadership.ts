/**
 * One term of leadership of this instance, handed to the task `LeaderService.lead()` runs while
 * this instance leads `name`.
 */
export interface Leadership {
  /** The leadership's name, as given to `lead()`. */
  readonly name: string;
  /**
   * Strictly increasing per name over successive leaders: the fence of the lock `leader:{name}`.
   * Pass it to the resources the leader writes to and have them refuse a term older than one they
   * have seen; a leader paused past its lease is then refused after its successor wrote.
   */
  readonly term: number | undefined;
  /** Aborts the moment leadership is lost (reason: `LockLostError`) or given up (resign, stop, shutdown). */
  readonly signal: AbortSignal;
  /** Epoch ms at which this instance became leader. */
  readonly since: number;
}

/** Who leads a name, as the store says (`LeaderService.leader()`), from any instance. */
export interface LeaderInfo {
  /** The leader's instance label (module option `instance`, default `hostname:pid`). */
  readonly instance?: string;
  /** The leader's term, where the store keeps the holder's fence. */
  readonly term?: number;
}

/** This instance's view of one leadership, emitted by `LeaderService.leadership$()` on every change. */
export interface LeadershipChange {
  /** This instance leads the name now. */
  readonly leader: boolean;
  /** The term while leading. */
  readonly term?: number;
}

/** What `lead()` does once its task returns. */
export type AfterTask = 'campaign' | 'stop';

/** Options of `LeaderService.lead()`. */
export interface LeadOptions {
  /**
   * Lease of the leadership lock, renewed in the background while leading: a leader that crashes
   * (or pauses) is replaced within it (ZooKeeper and etcd: within the session / lease TTL instead).
   * Default: the module's `leaseMs`.
   */
  leaseMs?: number;
  /** When the task returns: resign and campaign again (`'campaign'`, the default), or resign and stop (`'stop'`). */
  afterTask?: AfterTask;
}

/** A running campaign (`lead()`'s result). */
export interface Campaign {
  /** Gives up leadership if held (the task's `signal` aborts, the lock is released) and stops campaigning. */
  stop(): Promise<void>;
}

/** The lock key of a leadership (without the module's `keyPrefix`). */
export const leadershipKey = (name: string): string => `leader:${name}`;
