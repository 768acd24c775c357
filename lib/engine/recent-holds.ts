/** How many of this instance's last releases an engine remembers the hold times of. */
const RECENT_HOLDS = 1_000;

/** How many of a key's last holds the estimate looks at. */
export const RECENT_HOLDS_PER_KEY = 5;

/**
 * The durations of this instance's last `RECENT_HOLDS` holds, whatever their keys, fed by every
 * release, for an honest guess of when a busy key frees: `LockTimeoutError.likelyFreeInMs`, HTTP
 * `Retry-After`. A lease's own expiry says nothing useful there, since renewals keep it full for as
 * long as the holder works.
 *
 * A ring of the last releases rather than a map per key: recording a release (every lock's path) is
 * two array writes, with no hashing; the estimate, asked only when a wait for a busy key times out,
 * reads the ring backwards for the key's last `RECENT_HOLDS_PER_KEY` holds.
 */
export class RecentHolds {
  private readonly keys: (string | undefined)[];
  private readonly heldMs: Float64Array;
  /** Where the next release goes: the oldest one is overwritten. */
  private next = 0;

  constructor(
    capacity = RECENT_HOLDS,
    private readonly perKey = RECENT_HOLDS_PER_KEY,
  ) {
    this.keys = new Array<string | undefined>(Math.max(1, capacity)).fill(undefined);
    this.heldMs = new Float64Array(this.keys.length);
  }

  /** A hold of `key` ended (released) after `heldMs`. */
  record(key: string, heldMs: number): void {
    this.keys[this.next] = key;
    this.heldMs[this.next] = heldMs;
    this.next = this.next + 1 === this.keys.length ? 0 : this.next + 1;
  }

  /**
   * How long until `key` likely frees, given that its current hold has lasted at least `heldForMs`
   * (0 when nothing is known of it): the median of this instance's last holds of the key, less
   * `heldForMs`, but never less than `heldForMs` itself. A hold that has outlasted the typical one is
   * not typical: as likely as not it runs as long again, and an estimate shorter than it has
   * already lasted is known to be wrong. Undefined when this instance has not held the key
   * recently: nothing is known, and nothing is guessed.
   */
  likelyFreeInMs(key: string, heldForMs = 0): number | undefined {
    const holds: number[] = [];
    const size = this.keys.length;
    for (let i = 1; i <= size && holds.length < this.perKey; i++) {
      const slot = (this.next - i + size) % size;
      if (this.keys[slot] === key) holds.push(this.heldMs[slot]);
    }
    if (holds.length === 0) return undefined;
    holds.sort((a, b) => a - b);
    const middle = holds.length >> 1;
    const median = holds.length % 2 === 1 ? holds[middle] : (holds[middle - 1] + holds[middle]) / 2;
    return Math.round(Math.max(median - heldForMs, heldForMs, 0));
  }

  /** Keys remembered now (for tests of the bound). */
  get size(): number {
    return new Set(this.keys.filter((key) => key !== undefined)).size;
  }
}
