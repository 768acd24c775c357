import { validityAfterDrift } from '../drift.js';
import { monotonicNow } from '../../util/clock.js';
import type { AttemptResult } from '../../engine/lock-backend.js';
import type { FenceUpkeep } from './fence-upkeep.js';

/**
 * @internal Fences a plain acquisition reserves when other claims of this process already wait for the key.
 * Below 1 000: the fence counter's TTL leaves 1 ms for fences reserved ahead of the clock (counterTtlMs).
 */
export const TURN_FENCES = 128;

/**
 * @internal How long a turn may pass the lock from claim to claim of this process before it frees
 * the key in Redis, so that waiters of other processes (and fair or read claims) get their chance.
 */
export const TURN_MS = 10;

/**
 * @internal At most how long a process whose turn ended stands back, per other process that waits
 * (ChannelWaiters.standBack): room for a full turn of each, plus its hand-off.
 */
export const STAND_BACK_MS_PER_PROCESS = 2 * TURN_MS;

/**
 * @internal A plain exclusive lock as this process holds it in Redis while it passes from one of
 * its claims to the next without a round trip (a local hand-off). The key keeps the owner id of
 * the turn's first holder; every holder of the turn renews and releases with it. The fences were
 * reserved in Redis when the turn began (one INCRBY), so the fence counter is already past every
 * fence the turn hands out, even if this process dies mid-turn.
 */
export class LocalTurn {
  private readonly startedAt = monotonicNow();
  /** Store writes (renewals) in flight: until they land, the key's expiry is not known exactly. */
  private writes = 0;

  constructor(
    /** The owner id stored in the key. */
    readonly storeOwner: string,
    /** The next reserved fence; `lastFence + 1` when none is left. */
    private nextFence: number,
    private readonly lastFence: number,
    /** Monotonic time until which the key surely is this turn's (the latest write that set its TTL, plus that TTL). */
    public validUntil: number,
    /** Keeps the key's fence counter alive through the renewals of every holder of the turn. */
    readonly fenceUpkeep: FenceUpkeep,
    /** The backend's `driftFactor`: Redis's clock may run fast against ours by this share of a lease. */
    private readonly driftFactor = 0,
  ) {}

  /**
   * The next fence, for a hand-off to a claim that wants `leaseMs`; undefined when the turn must
   * end instead: fences used up, time up, a renewal in flight, or too little validity left.
   */
  nextHandOff(leaseMs: number): number | undefined {
    const now = monotonicNow();
    if (this.nextFence > this.lastFence || this.writes > 0) return undefined;
    if (now - this.startedAt >= TURN_MS || this.validUntil - now < leaseMs / 3) return undefined;
    return this.nextFence++;
  }

  /**
   * Runs a renewal (`extend` resolves whether the key was still the turn's) and keeps `validUntil`
   * exact: no hand-off while it is in flight, the turn ends when the key is no longer its, and a
   * renewal with no answer may have shortened the TTL, so the bound drops to what it may have set.
   */
  async renew(leaseMs: number, extend: () => Promise<boolean>): Promise<boolean> {
    const startedAt = monotonicNow();
    this.writes++;
    try {
      const extended = await extend();
      if (extended) this.validUntil = startedAt + validityAfterDrift(leaseMs, this.driftFactor);
      else this.end();
      return extended;
    } catch (error) {
      this.validUntil = Math.min(this.validUntil, startedAt + validityAfterDrift(leaseMs, this.driftFactor));
      throw error;
    } finally {
      this.writes--;
    }
  }

  /**
   * Passes the lock to the oldest plain claim of this process asleep waiting for the key (among
   * `waiters`), if there is one and the turn allows; whether it did. The claim that released holds
   * the lock no more once it did.
   */
  passOn(waiters: { handOffReceiver(): HandOffReceiver | undefined } | undefined): boolean {
    const receiver = waiters?.handOffReceiver();
    const fence = receiver && this.nextHandOff(receiver.leaseMs);
    if (!receiver || fence === undefined) return false;
    receiver.receive(this, fence);
    return true;
  }

  /** What the attempt of a claim that was handed the lock with `fence` returns: held, without a round trip. */
  handedOver(fence: number): AttemptResult {
    return { acquired: true, fence, validityMs: this.validUntil - monotonicNow() };
  }

  /** No more hand-offs: the key is not (surely) the turn's any more. */
  end(): void {
    this.nextFence = this.lastFence + 1;
    this.validUntil = -Infinity;
  }
}

/** @internal A waiting plain claim that can take the lock over from a releasing claim of this process. */
export interface HandOffReceiver {
  readonly leaseMs: number;
  /** Still waiting, without a place in the key's queue. */
  readonly canReceive: boolean;
  /** Holds the lock from now on, with `fence`; wakes the claim so its next attempt returns the grant. */
  receive(turn: LocalTurn, fence: number): void;
}
