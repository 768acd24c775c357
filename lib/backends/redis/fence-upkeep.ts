import { monotonicNow } from '../../engine/clock.js';

/**
 * @internal When a renewal must also keep the key's fence counter alive. The acquisition gave the
 * counter a TTL of at least lease + `idleKeyTtlMs`; a renewal raises it again (to its new lease +
 * `idleKeyTtlMs`) only once the counter could otherwise expire within the new lease plus half the
 * idle time. So an ordinary hold renews the lock key alone (a day's default idle time leaves twelve
 * hours), and a lock held longer than that never loses its counter. The half idle time is also the
 * margin for Redis's clock running faster than this process's.
 */
export class FenceUpkeep {
  /** Monotonic time until which the counter surely lives. */
  private keptUntil: number;

  constructor(
    private readonly idleKeyTtlMs: number,
    /** When the acquisition that set the counter's TTL started (the script ran after it). */
    acquiredAt: number,
    leaseMs: number,
    /** How far (ms) the holder's last fence ran ahead of Redis's clock when reserved; undefined when unknown. */
    readonly aheadMs?: number,
  ) {
    this.keptUntil = acquiredAt + leaseMs + idleKeyTtlMs;
  }

  /** The idle time to send with a renewal starting now with `leaseMs`, or undefined when the counter lives long enough without. */
  due(leaseMs: number): number | undefined {
    return this.keptUntil - monotonicNow() < leaseMs + this.idleKeyTtlMs / 2 ? this.idleKeyTtlMs : undefined;
  }

  /** A renewal sent with the idle time, started at `startedAt`, succeeded: the counter lives lease + idle from then. */
  kept(startedAt: number, leaseMs: number): void {
    this.keptUntil = Math.max(this.keptUntil, startedAt + leaseMs + this.idleKeyTtlMs);
  }
}
