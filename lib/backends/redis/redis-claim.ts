import { monotonicNow } from '../../engine/clock.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../lock-backend.js';
import { acquireLock, type AcquireRequest } from './acquire.js';
import { ReleaseWaiter, type ChannelWaiters } from './channel-waiters.js';
import type { QueueHeartbeat, QueuePlace } from './queue-heartbeat.js';
import { releaseReadLock, renewReadLock } from './read-lease.js';
import type { RedisClient } from './redis-client.js';
import { redisLockKeys, type RedisLockKeys } from './redis-keys.js';
import type { ReleaseListener } from './release-listener.js';
import { RELEASED_MESSAGE, releaseLock } from './release.js';
import { renewLock } from './renew.js';
import { leaveQueue, queueEntryOf, queuePolicyOf } from './wait-queue.js';

/** @internal What the claims of one backend share. */
export interface RedisClaimContext {
  readonly client: RedisClient;
  readonly listener: ReleaseListener;
  readonly heartbeat: QueueHeartbeat;
  /** Registers a command in flight, so that closing the backend can let it settle first. */
  readonly track: <T>(command: Promise<T>) => Promise<T>;
}

/**
 * @internal One acquisition on Redis. A writer (mode 'exclusive' or 'write') holds the lock key (its
 * owner id, the lease as TTL); a reader holds an entry in the key's readers set. A refused claim may
 * take a place in the key's queue (see `QueuePolicy`), which the backend's heartbeat keeps alive
 * until the claim gets the lock or gives up.
 */
export class RedisClaim implements LockClaim, QueuePlace {
  readonly keys: RedisLockKeys;
  readonly entry: string;
  private readonly attempt: AcquireRequest;
  private readonly reader: boolean;
  /** A plain exclusive claim (not fair): queues only when it finds a queue, else keeps this process's own FIFO. */
  private readonly plain: boolean;
  private readonly waiter = new ReleaseWaiter();
  private waiting: ChannelWaiters | undefined;
  /** Confirmed held by this owner. */
  private held = false;
  /** An attempt failed without an answer: it may have taken the lock or a place, so release must clean up. */
  private maybeHeld = false;
  /** Has a place in the key's queue. */
  private queued = false;
  /** Monotonic time by which the holder's lease ends, from this claim's latest busy answer. */
  private holderDeadline: number | undefined;

  constructor(
    private readonly context: RedisClaimContext,
    private readonly request: ClaimRequest,
  ) {
    this.keys = redisLockKeys(request.key);
    this.entry = queueEntryOf(request);
    const policy = queuePolicyOf(request);
    this.attempt = { owner: request.owner, leaseMs: request.leaseMs, mode: request.mode, policy };
    this.reader = request.mode === 'read';
    this.plain = policy === 'found';
  }

  async tryAcquire(): Promise<AttemptResult> {
    const woken = this.waiter.noteTry();
    this.waiting?.noteTry();
    const local = this.waiting ?? this.context.listener.waitersOf(this.keys.channel);
    if (!this.waiting && this.plain) {
      // Claims of this process queued first (FIFO here, like the memory backend), so a holder that
      // releases and asks again at once does not overtake the waiter its release woke.
      const holderTtlMs = local?.queuedAheadTtl();
      if (holderTtlMs !== undefined) return { acquired: false, holderTtlMs };
    }
    let reply;
    try {
      reply = await this.context.track(acquireLock(this.context.client, this.keys, this.attempt));
    } catch (error) {
      this.maybeHeld = true;
      throw error;
    }
    this.setQueued(!reply.acquired && reply.queued);
    if (!reply.acquired) {
      this.holderDeadline = reply.holderTtlMs === undefined ? undefined : monotonicNow() + reply.holderTtlMs;
      if (this.plain) local?.noteHolderUntil(this.holderDeadline);
      // Woken, but the key is free and others queue first: the one whose turn it is may sleep here, behind us.
      if (woken && !reply.held) this.waiting?.wakeNext(this.waiter);
      return { acquired: false, holderTtlMs: reply.holderTtlMs };
    }
    if (this.plain) local?.noteHolderUntil(monotonicNow() + this.request.leaseMs);
    this.held = true;
    this.stopWaiting();
    // Readers share the key: the next waiter of this process may get in too (a writer finds it held and sleeps again).
    if (this.reader) local?.wakeNext();
    return { acquired: true, fence: reply.fence, validityMs: this.request.leaseMs };
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    if (!this.waiting) {
      this.waiting = this.context.listener.join(this.keys.channel, this.waiter);
      if (this.plain) this.waiting.noteHolderUntil(this.holderDeadline);
    }
    await this.context.listener.wait(this.waiting, this.waiter, maxMs, signal);
  }

  async renew(leaseMs: number): Promise<number | false> {
    const { client, track } = this.context;
    const owner = this.request.owner;
    const renewal = this.reader ? renewReadLock(client, this.keys, owner, leaseMs) : renewLock(client, this.keys, owner, leaseMs);
    return (await track(renewal)) ? leaseMs : false;
  }

  async release(): Promise<boolean> {
    this.stopWaiting();
    const mayHold = this.held || this.maybeHeld;
    const mayQueue = this.queued || this.maybeHeld;
    this.setQueued(false);
    if (!mayHold && !mayQueue) return true;
    const wasHeld = this.held;
    const { client, track } = this.context;
    const owner = this.request.owner;
    const [freed] = await Promise.all([
      mayHold ? track(this.reader ? releaseReadLock(client, this.keys, owner) : releaseLock(client, this.keys, owner)) : false,
      mayQueue ? track(leaveQueue(client, this.keys, this.entry, RELEASED_MESSAGE)) : false,
    ]);
    this.held = false;
    this.maybeHeld = false;
    return freed || !wasHeld;
  }

  private setQueued(queued: boolean): void {
    if (queued === this.queued) return;
    this.queued = queued;
    if (queued) this.context.heartbeat.add(this);
    else this.context.heartbeat.delete(this);
  }

  private stopWaiting(): void {
    if (!this.waiting) return;
    this.context.listener.leave(this.waiting, this.waiter);
    this.waiting = undefined;
  }
}
