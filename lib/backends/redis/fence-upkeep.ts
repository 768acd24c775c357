import { monotonicNow } from '../../util/clock.js';

/** How much longer than the idle time after its last release a key's fence counter may live: a hundredth. */
const IDLE_EXCESS_SHARE = 0.01;

/**
 * @internal When a renewal must also keep the key's fence counter alive. The acquisition gave the
 * counter a TTL of at least lease + `idleKeyTtlMs`; a renewal raises it again (to its new lease +
 * `idleKeyTtlMs`) only once the counter could otherwise expire within the new lease plus half the
 * idle time. So an ordinary hold renews the lock key alone (a day's default idle time leaves twelve
 * hours), and a lock held longer than that never loses its counter. The half idle time is also the
 * margin for Redis's clock running faster than this process's.
 */
export class FenceUpkeep {
  /** When the call that last set the counter's TTL (to its lease + the idle time) started, and that lease. */
  private keptFrom: number;
  private keptLeaseMs: number;

  constructor(
    private readonly idleKeyTtlMs: number,
    /** When the acquisition that set the counter's TTL started (the script ran after it). */
    acquiredAt: number,
    leaseMs: number,
    /** How far (ms) the holder's last fence ran ahead of Redis's clock when reserved; undefined when unknown. */
    readonly aheadMs?: number,
  ) {
    this.keptFrom = acquiredAt;
    this.keptLeaseMs = leaseMs;
  }

  /** Monotonic time until which the counter surely lives. */
  private get keptUntil(): number {
    return this.keptFrom + this.keptLeaseMs + this.idleKeyTtlMs;
  }

  /** The idle time to send with a renewal starting now with `leaseMs`, or undefined when the counter lives long enough without. */
  due(leaseMs: number): number | undefined {
    return this.keptUntil - monotonicNow() < leaseMs + this.idleKeyTtlMs / 2 ? this.idleKeyTtlMs : undefined;
  }

  /** A renewal sent with the idle time, started at `startedAt`, succeeded: the counter lives lease + idle from then. */
  kept(startedAt: number, leaseMs: number): void {
    if (startedAt + leaseMs + this.idleKeyTtlMs <= this.keptUntil) return;
    this.keptFrom = startedAt;
    this.keptLeaseMs = leaseMs;
  }

  /**
   * Whether an exclusive holder releasing now can leave the counter's TTL as it is: the lease it was
   * last kept for is not spent yet (counted on a Redis clock running up to `driftFactor` faster than
   * this process's), so the counter outlives the release by the idle time already (plus how far its
   * fences run ahead), and that lease is at most a hundredth of the idle time, so it expires at most
   * that much later than asked. With the defaults (30 s leases, a day's idle time) a hold shorter
   * than its lease frees the key with no PEXPIRE. False when how far the fences run ahead is unknown.
   */
  outlivesRelease(driftFactor: number): boolean {
    if (this.aheadMs === undefined || this.keptLeaseMs > this.idleKeyTtlMs * IDLE_EXCESS_SHARE) return false;
    return (monotonicNow() - this.keptFrom) * (1 + driftFactor) + Math.max(0, this.aheadMs) <= this.keptLeaseMs;
  }
}
