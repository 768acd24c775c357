import { validityAfterDrift } from '../drift.js';
import { monotonicNow } from '../../util/clock.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../../engine/lock-backend.js';
import { ReleaseWaiter, type ChannelWaiters } from './channel-waiters.js';
import { FenceUpkeep } from './fence-upkeep.js';
import type { RedisClaimContext } from './redis-claim.js';
import type { RedisClient } from './redis-client.js';
import type { ReleaseListener } from './release-listener.js';
import { redisSemaphoreKeys, type RedisSemaphoreKeys } from './semaphore-keys.js';
import { acquirePermit, releasePermit, renewPermit } from './semaphore-scripts.js';
import { acknowledgedOrUndone, renewedOnReplicas, type HeldEntry, type ReplicaAcknowledger } from './replica-ack.js';

/**
 * @internal One permit of a counting semaphore on Redis: this owner's entry in the key's sorted
 * set of permits, scored by its expiry. Waits like a lock claim, on the semaphore's own release channel.
 */
export class RedisSemaphoreClaim implements LockClaim {
  private readonly keys: RedisSemaphoreKeys;
  private readonly permits: number;
  private readonly waiter = new ReleaseWaiter();
  private waiting: ChannelWaiters | undefined;
  private held = false;
  /** An attempt failed without an answer: it may have taken a permit, so release must clean up. */
  private maybeHeld = false;
  /** Monotonic time by which the first permit lapses, from this claim's latest busy answer. */
  private firstExpiry: number | undefined;
  /** While held: when renewals must keep the fence counter alive too. */
  private fenceUpkeep: FenceUpkeep | undefined;

  private readonly client: RedisClient;
  private readonly listener: ReleaseListener;
  /** Counts a renewal, which the engine does not wait for (see RedisClaimContext.track). */
  private readonly track: <T>(command: Promise<T>) => Promise<T>;
  private readonly idleKeyTtlMs: number;
  private readonly driftFactor: number;
  private readonly replicas: ReplicaAcknowledger | undefined;

  constructor(
    context: RedisClaimContext,
    private readonly request: ClaimRequest,
  ) {
    ({
      client: this.client,
      listener: this.listener,
      track: this.track,
      idleKeyTtlMs: this.idleKeyTtlMs,
      replicas: this.replicas,
      driftFactor: this.driftFactor,
    } = context);
    this.keys = redisSemaphoreKeys(request.key);
    this.permits = request.permits ?? 1;
  }

  async tryAcquire(): Promise<AttemptResult> {
    this.waiter.noteTry();
    this.waiting?.noteTry();
    const local = this.waiting ?? this.listener.waitersOf(this.keys.channel);
    if (!this.waiting) {
      // Claims of this process that already wait go first, so a holder that releases and asks again
      // at once does not take back the permit its release announced to them.
      const holderTtlMs = local?.queuedAheadTtl();
      if (holderTtlMs !== undefined) return { acquired: false, holderTtlMs };
    }
    const startedAt = monotonicNow();
    let reply;
    try {
      reply = await acquirePermit(
        this.client,
        this.keys,
        this.request.owner,
        this.permits,
        this.request.leaseMs,
        this.idleKeyTtlMs,
      );
    } catch (error) {
      this.maybeHeld = true;
      throw error;
    }
    if (!reply.acquired) {
      this.firstExpiry = monotonicNow() + reply.holderTtlMs;
      local?.noteHolderUntil(this.firstExpiry);
      return reply;
    }
    if (this.replicas) await acknowledgedOrUndone(this.replicas, this.heldEntry, () => this.undo());
    this.held = true;
    this.fenceUpkeep = new FenceUpkeep(this.idleKeyTtlMs, startedAt, this.request.leaseMs);
    this.stopWaiting();
    return {
      acquired: true,
      fence: reply.fence,
      validityMs: validityAfterDrift(this.request.leaseMs, this.driftFactor),
    };
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    if (!this.waiting) {
      this.waiting = this.listener.join(this.keys.channel, this.waiter);
      this.waiting.noteHolderUntil(this.firstExpiry);
    }
    // The engine's bound is the first permit's expiry, should no release message come.
    await this.listener.wait(this.waiting, this.waiter, maxMs, signal);
  }

  validityFor(leaseMs: number): number {
    return validityAfterDrift(leaseMs, this.driftFactor);
  }

  async renew(leaseMs: number): Promise<number | false> {
    const upkeep = this.fenceUpkeep;
    const fenceIdleMs = upkeep ? upkeep.due(leaseMs) : this.idleKeyTtlMs;
    const startedAt = monotonicNow();
    const renewed = this.track(renewPermit(this.client, this.keys, this.request.owner, leaseMs, fenceIdleMs));
    const extended = await (this.replicas
      ? this.track(renewedOnReplicas(this.replicas, this.heldEntry, renewed))
      : renewed);
    if (extended && fenceIdleMs !== undefined) upkeep?.kept(startedAt, leaseMs);
    return extended ? validityAfterDrift(leaseMs, this.driftFactor) : false;
  }

  async release(): Promise<boolean> {
    this.stopWaiting();
    if (!this.held && !this.maybeHeld) return true;
    const wasHeld = this.held;
    const freed = await releasePermit(this.client, this.keys, this.request.owner, this.idleKeyTtlMs);
    this.held = false;
    this.maybeHeld = false;
    return freed || !wasHeld;
  }

  /** Drops a permit the replicas did not acknowledge; if that fails too, release() tries again. */
  private async undo(): Promise<void> {
    await releasePermit(this.client, this.keys, this.request.owner, this.idleKeyTtlMs).catch(
      () => (this.maybeHeld = true),
    );
  }

  /** This claim's permit: its owner's entry in the permits set. */
  private get heldEntry(): HeldEntry {
    return { key: this.keys.permits, owner: this.request.owner, kind: 'member' };
  }

  private stopWaiting(): void {
    if (!this.waiting) return;
    this.listener.leave(this.waiting, this.waiter);
    this.waiting = undefined;
  }
}
