import { monotonicNow } from '../../engine/clock.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../lock-backend.js';
import { acquireLock } from './acquire.js';
import { ReleaseWaiter, type ChannelWaiters } from './channel-waiters.js';
import type { RedisClient } from './redis-client.js';
import { redisLockKeys, type RedisLockKeys } from './redis-keys.js';
import type { ReleaseListener } from './release-listener.js';
import { releaseLock } from './release.js';
import { renewLock } from './renew.js';

/** @internal One acquisition on Redis: a key holding the owner id with the lease as its TTL. */
export class RedisClaim implements LockClaim {
  private readonly keys: RedisLockKeys;
  private readonly waiter = new ReleaseWaiter();
  private waiting: ChannelWaiters | undefined;
  /** Confirmed held by this owner. */
  private held = false;
  /** An attempt failed without an answer: it may have taken the lock, so release must clean up. */
  private maybeHeld = false;
  /** Monotonic time by which the holder's lease ends, from this claim's latest busy answer. */
  private holderDeadline: number | undefined;

  constructor(
    private readonly client: RedisClient,
    private readonly listener: ReleaseListener,
    private readonly request: ClaimRequest,
    /** Registers a command in flight, so that closing the backend can let it settle first. */
    private readonly track: <T>(command: Promise<T>) => Promise<T> = (command) => command,
  ) {
    this.keys = redisLockKeys(request.key);
  }

  async tryAcquire(): Promise<AttemptResult> {
    this.waiter.noteTry();
    this.waiting?.noteTry();
    const local = this.waiting ?? this.listener.waitersOf(this.keys.channel);
    if (!this.waiting) {
      // Claims of this process queued first (FIFO here, like the memory backend), so a holder
      // that releases and asks again at once does not overtake the waiter its release woke.
      const holderTtlMs = local?.queuedAheadTtl();
      if (holderTtlMs !== undefined) return { acquired: false, holderTtlMs };
    }
    let reply;
    try {
      reply = await this.track(acquireLock(this.client, this.keys, this.request.owner, this.request.leaseMs));
    } catch (error) {
      this.maybeHeld = true;
      throw error;
    }
    if (!reply.acquired) {
      this.holderDeadline = reply.holderTtlMs === undefined ? undefined : monotonicNow() + reply.holderTtlMs;
      local?.noteHolderUntil(this.holderDeadline);
      return reply;
    }
    local?.noteHolderUntil(monotonicNow() + this.request.leaseMs);
    this.held = true;
    this.stopWaiting();
    return { acquired: true, fence: reply.fence, validityMs: this.request.leaseMs };
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    try {
      if (!this.waiting) {
        this.waiting = this.listener.join(this.keys.channel, this.waiter);
        this.waiting.noteHolderUntil(this.holderDeadline);
      }
      const startedAt = monotonicNow();
      if (!(await this.listener.subscribed(this.waiting, maxMs, signal))) {
        // No notification without a subscription: fall back to the engine's bound.
        return await this.waiter.sleep(maxMs - (monotonicNow() - startedAt), signal);
      }
      // A release between our last try and the moment the subscription started was announced to nobody: try again.
      if (this.waiting.activeSince >= this.waiter.lastTryAt) return;
      if (this.waiting.takePending()) return;
      await this.waiter.sleep(maxMs - (monotonicNow() - startedAt), signal);
    } catch {
      // Never rejects: the engine simply tries again.
    }
  }

  async renew(leaseMs: number): Promise<number | false> {
    return (await this.track(renewLock(this.client, this.keys, this.request.owner, leaseMs))) ? leaseMs : false;
  }

  async release(): Promise<boolean> {
    this.stopWaiting();
    if (!this.held && !this.maybeHeld) return true;
    const wasHeld = this.held;
    const freed = await this.track(releaseLock(this.client, this.keys, this.request.owner));
    this.held = false;
    this.maybeHeld = false;
    return freed || !wasHeld;
  }

  private stopWaiting(): void {
    if (!this.waiting) return;
    this.listener.leave(this.waiting, this.waiter);
    this.waiting = undefined;
  }
}
