/** How many keys an engine remembers hold times of; keys released least recently are dropped first. */
export const RECENT_HOLD_KEYS = 1_000;

/** How many of a key's last holds the estimate looks at. */
export const RECENT_HOLDS_PER_KEY = 5;

/** A key's last holds: one number until it has been held twice (most keys are held once). */
type Holds = number | number[];

/**
 * The durations of this instance's last holds of each key (at most `RECENT_HOLD_KEYS` keys,
 * `RECENT_HOLDS_PER_KEY` holds each), fed by every release, for an honest guess of when a busy key
 * frees: `LockTimeoutError.likelyFreeInMs`, HTTP `Retry-After`. A lease's own expiry says nothing
 * useful there, since renewals keep it full for as long as the holder works.
 *
 * Two generations of half the bound each, rather than an exact LRU: recording a key released for
 * the first time is one map lookup per generation and one insert, with no reordering or eviction
 * per release; a full generation is dropped whole, the older one first (keys recorded again move to
 * the newer one).
 */
export class RecentHolds {
  private current = new Map<string, Holds>();
  private previous = new Map<string, Holds>();
  private readonly generationSize: number;

  constructor(
    maxKeys = RECENT_HOLD_KEYS,
    private readonly perKey = RECENT_HOLDS_PER_KEY,
  ) {
    // Both generations together stay within maxKeys: the newer is full at most for the moment it turns older.
    this.generationSize = Math.max(1, Math.floor((maxKeys + 1) / 2));
  }

  /** A hold of `key` ended (released) after `heldMs`. */
  record(key: string, heldMs: number): void {
    let holds = this.current.get(key);
    if (holds === undefined) {
      holds = this.previous.get(key);
      if (holds !== undefined) this.previous.delete(key);
    }
    if (holds === undefined) holds = heldMs;
    else if (typeof holds === 'number') holds = [holds, heldMs];
    else {
      if (holds.length >= this.perKey) holds.shift();
      holds.push(heldMs);
    }
    this.current.set(key, holds);
    if (this.current.size >= this.generationSize) {
      this.previous = this.current;
      this.current = new Map();
    }
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
    const holds = this.current.get(key) ?? this.previous.get(key);
    if (holds === undefined) return undefined;
    const sorted = typeof holds === 'number' ? [holds] : [...holds].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    return Math.round(Math.max(median - heldForMs, heldForMs, 0));
  }

  /** Keys remembered now (for tests of the bound). */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}
