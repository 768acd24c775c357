/** How many keys an engine remembers hold times of; the key released least recently is dropped first. */
export const RECENT_HOLD_KEYS = 1_000;

/** How many of a key's last holds the estimate looks at. */
export const RECENT_HOLDS_PER_KEY = 5;

/**
 * The durations of this instance's last holds of each key (a bounded LRU: `RECENT_HOLD_KEYS` keys,
 * `RECENT_HOLDS_PER_KEY` holds each), fed by every release, for an honest guess of when a busy key
 * frees: `LockTimeoutError.likelyFreeInMs`, HTTP `Retry-After`. A lease's own expiry says nothing
 * useful there, since renewals keep it full for as long as the holder works.
 */
export class RecentHolds {
  private readonly byKey = new Map<string, number[]>();

  constructor(
    private readonly maxKeys = RECENT_HOLD_KEYS,
    private readonly perKey = RECENT_HOLDS_PER_KEY,
  ) {}

  /** A hold of `key` ended (released) after `heldMs`. */
  record(key: string, heldMs: number): void {
    let holds = this.byKey.get(key);
    if (holds) {
      this.byKey.delete(key);
      if (holds.length >= this.perKey) holds.shift();
    } else {
      holds = [];
      if (this.byKey.size >= this.maxKeys) this.byKey.delete(this.byKey.keys().next().value!);
    }
    holds.push(heldMs);
    this.byKey.set(key, holds);
  }

  /**
   * How long until `key` likely frees: the median of its last holds, less `currentAgeMs` (how long
   * the current hold has lasted, when this instance holds it), at least 0. Undefined when this
   * instance has not held the key recently: nothing is known.
   */
  likelyFreeInMs(key: string, currentAgeMs = 0): number | undefined {
    const holds = this.byKey.get(key);
    if (!holds) return undefined;
    const sorted = [...holds].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    return Math.max(0, Math.round(median - currentAgeMs));
  }

  /** Keys remembered now (for tests of the bound). */
  get size(): number {
    return this.byKey.size;
  }
}
