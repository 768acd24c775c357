import { validityAfterDrift } from '../drift.js';
import { monotonicNow } from '../../util/clock.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../../engine/lock-backend.js';
import { acquireLock, type AcquireReply, type AcquireRequest } from './acquire.js';
import { ReleaseWaiter, type ChannelWaiters } from './channel-waiters.js';
import { FenceUpkeep } from './fence-upkeep.js';
import { LocalTurn, TURN_FENCES, type HandOffReceiver } from './local-turn.js';
import type { QueueHeartbeat, QueuePlace } from './queue-heartbeat.js';
import { releaseReadLock, renewReadLock } from './read-lease.js';
import type { RedisClient } from './redis-client.js';
import { redisLockKeys, type RedisLockKeys } from './redis-keys.js';
import type { ReleaseListener } from './release-listener.js';
import { RELEASED_MESSAGE, releaseHolding, releaseLock, releaseLockHeard, releaseLockIfWaited } from './release.js';
import { acknowledgedOrUndone, renewedOnReplicas, type HeldEntry, type ReplicaAcknowledger } from './replica-ack.js';
import { renewLock } from './renew.js';
import { leaveQueue, queueEntryOf, queuePolicyOf } from './wait-queue.js';

/** @internal What the claims of one backend share. */
export interface RedisClaimContext {
  readonly client: RedisClient;
  readonly listener: ReleaseListener;
  readonly heartbeat: QueueHeartbeat;
  /** Counts a command the engine does not wait for (renewals), so that closing the backend can let it settle first. */
  readonly track: <T>(command: Promise<T>) => Promise<T>;
  /** How long a key's fence counter outlives its last lease (the `idleKeyTtlMs` option). */
  readonly idleKeyTtlMs: number;
  /** Replicas that must acknowledge acquisitions and renewals (the `replicas` option), if any. */
  readonly replicas?: ReplicaAcknowledger;
  /** The `driftFactor` option: the validity reported is the lease less lease x driftFactor + 2 ms. */
  readonly driftFactor: number;
}

/**
 * @internal One acquisition on Redis. A writer (mode 'exclusive' or 'write') holds the lock key (its
 * owner id, the lease as TTL); a reader holds an entry in the key's readers set. A refused claim may
 * take a place in the key's queue (see `QueuePolicy`), which the backend's heartbeat keeps alive
 * until the claim gets the lock or gives up.
 *
 * A plain claim that releases while another plain claim of this process sleeps waiting for the
 * key hands the lock straight to it, without a round trip, within a bounded turn (local-turn.ts).
 */
export class RedisClaim implements LockClaim, QueuePlace, HandOffReceiver {
  readonly keys: RedisLockKeys;
  readonly entry: string;
  private readonly attempt: AcquireRequest;
  private readonly reader: boolean;
  /** A plain exclusive claim (not fair): queues only when it finds a queue, else keeps this process's own FIFO. */
  private readonly plain: boolean;
  private readonly waiter: ReleaseWaiter;
  private waiting: ChannelWaiters | undefined;
  /** Confirmed held by this owner. */
  private held = false;
  /** An attempt failed without an answer: it may have taken the lock or a place, so release must clean up. */
  private maybeHeld = false;
  /** Has a place in the key's queue. */
  private queued = false;
  /** Monotonic time by which the holder's lease ends, from this claim's latest busy answer. */
  private holderDeadline: number | undefined;
  /** While a plain claim holds the lock: the turn it holds it in (whose owner id the key stores). */
  private turn: LocalTurn | undefined;
  /** A fence handed over by a releasing claim of this process, for the next attempt to return. */
  private handedFence: number | undefined;
  /** While held: when renewals must keep the fence counter alive too. */
  private fenceUpkeep: FenceUpkeep | undefined;

  constructor(
    private readonly context: RedisClaimContext,
    private readonly request: ClaimRequest,
  ) {
    this.keys = redisLockKeys(request.key);
    this.entry = queueEntryOf(request);
    const policy = queuePolicyOf(request);
    this.attempt = {
      owner: request.owner,
      leaseMs: request.leaseMs,
      mode: request.mode,
      policy,
      idleKeyTtlMs: context.idleKeyTtlMs,
    };
    this.reader = request.mode === 'read';
    this.plain = policy === 'found';
    this.waiter = new ReleaseWaiter(this.plain ? this : undefined);
  }

  get leaseMs(): number {
    return this.request.leaseMs;
  }

  get canReceive(): boolean {
    return !this.held && !this.queued && this.waiting !== undefined;
  }

  receive(turn: LocalTurn, fence: number): void {
    this.turn = turn;
    this.fenceUpkeep = turn.fenceUpkeep;
    this.handedFence = fence;
    this.held = true;
    this.waiter.wake();
  }

  tryAcquire(): Promise<AttemptResult> {
    const woken = this.waiter.noteTry();
    this.waiting?.noteTry();
    if (this.handedFence !== undefined) return Promise.resolve(this.takeHandOff(this.handedFence));
    const local = this.waiting ?? this.context.listener.waitersOf(this.keys.channel);
    if (!this.waiting && this.plain) {
      // Claims of this process queued first (FIFO here, like the memory backend), so a holder that
      // releases and asks again at once does not overtake the waiter its release woke.
      const holderTtlMs = local?.queuedAheadTtl();
      if (holderTtlMs !== undefined) return Promise.resolve({ acquired: false, holderTtlMs });
    }
    const yieldMs = this.plain ? local?.yieldLeft() : undefined;
    if (yieldMs !== undefined) return Promise.resolve({ acquired: false, holderTtlMs: yieldMs });
    // Others of this process wait already: reserve fences for a turn of local hand-offs.
    const attempt =
      this.plain && local && local.size > (this.waiting ? 1 : 0)
        ? { ...this.attempt, fences: TURN_FENCES }
        : this.attempt;
    const startedAt = monotonicNow();
    // One promise over the script's, not an async function awaiting it: every acquisition's path.
    return acquireLock(this.context.client, this.keys, attempt).then(
      (reply) => this.attempted(reply, startedAt, local, woken),
      (error: unknown) => {
        this.maybeHeld = true;
        // How far its fences run ahead is unknown now: the release reads it.
        this.fenceUpkeep = undefined;
        throw error;
      },
    );
  }

  /** What the acquire script answered an attempt that started at `startedAt`. */
  private attempted(
    reply: AcquireReply,
    startedAt: number,
    local: ChannelWaiters | undefined,
    woken: boolean,
  ): AttemptResult | Promise<AttemptResult> {
    this.setQueued(!reply.acquired && reply.queued);
    if (!reply.acquired) {
      this.holderDeadline = reply.holderTtlMs === undefined ? undefined : monotonicNow() + reply.holderTtlMs;
      if (this.plain) local?.noteHolderUntil(this.holderDeadline);
      // Woken, but the key is free and others queue first: the one whose turn it is may sleep here, behind us.
      if (woken && !reply.held) this.waiting?.wakeNext(this.waiter);
      return { acquired: false, holderTtlMs: reply.holderTtlMs };
    }
    const { replicas } = this.context;
    if (replicas)
      return acknowledgedOrUndone(replicas, this.heldEntry(this.request.owner), () => this.undo()).then(() =>
        this.granted(reply, startedAt, local),
      );
    return this.granted(reply, startedAt, local);
  }

  private granted(
    reply: AcquireReply & { acquired: true },
    startedAt: number,
    local: ChannelWaiters | undefined,
  ): AttemptResult {
    this.fenceUpkeep = new FenceUpkeep(this.context.idleKeyTtlMs, startedAt, this.request.leaseMs, reply.aheadMs);
    if (this.plain) {
      const validUntil = startedAt + validityAfterDrift(this.request.leaseMs, this.context.driftFactor);
      // A turn only when fences were reserved for it: a lone acquisition has nothing to hand on.
      if (reply.lastFence > reply.fence)
        this.turn = new LocalTurn(
          this.request.owner,
          reply.fence + 1,
          reply.lastFence,
          validUntil,
          this.fenceUpkeep,
          this.context.driftFactor,
        );
      local?.noteHolderUntil(validUntil);
    }
    this.held = true;
    this.stopWaiting();
    // Readers share the key: the next waiter of this process may get in too (a writer finds it held and sleeps again).
    if (this.reader) local?.wakeNext();
    return {
      acquired: true,
      fence: reply.fence,
      validityMs: validityAfterDrift(this.request.leaseMs, this.context.driftFactor),
    };
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    if (!this.waiting) {
      this.waiting = this.context.listener.join(this.keys.channel, this.waiter);
      if (this.plain) this.waiting.noteHolderUntil(this.holderDeadline);
    }
    await this.context.listener.wait(this.waiting, this.waiter, maxMs, signal);
  }

  validityFor(leaseMs: number): number {
    return validityAfterDrift(leaseMs, this.context.driftFactor);
  }

  async renew(leaseMs: number): Promise<number | false> {
    const { client, track } = this.context;
    const upkeep = this.fenceUpkeep;
    const fenceIdleMs = upkeep ? upkeep.due(leaseMs) : this.context.idleKeyTtlMs;
    const startedAt = monotonicNow();
    let extended: boolean;
    if (this.reader) {
      extended = await this.renewed(
        this.request.owner,
        track(renewReadLock(client, this.keys, this.request.owner, leaseMs, fenceIdleMs)),
      );
    } else {
      const turn = this.turn;
      const owner = turn?.storeOwner ?? this.request.owner;
      const extend = () => this.renewed(owner, track(renewLock(client, this.keys, owner, leaseMs, fenceIdleMs)));
      extended = await (turn ? turn.renew(leaseMs, extend) : extend());
    }
    if (extended && fenceIdleMs !== undefined) upkeep?.kept(startedAt, leaseMs);
    return extended ? validityAfterDrift(leaseMs, this.context.driftFactor) : false;
  }

  release(holdMs?: number): Promise<boolean> {
    // Held, with nothing else to clean up or hand on (every uncontended lock): the script's own promise.
    if (
      this.held &&
      !this.maybeHeld &&
      !this.queued &&
      this.handedFence === undefined &&
      this.waiting === undefined &&
      this.turn === undefined
    ) {
      this.held = false;
      return this.freeHeld(this.request.owner, holdMs);
    }
    return this.releaseAll(holdMs);
  }

  private async releaseAll(holdMs: number | undefined): Promise<boolean> {
    if (this.handedFence !== undefined) {
      // Handed the lock but gave up before taking it: the wake-up that came with it is used up here.
      this.handedFence = undefined;
      this.waiter.noteTry();
    }
    this.stopWaiting();
    // A key kept for minHoldMs is not handed on: nobody may take it before it lapses.
    if (this.held && holdMs === undefined && this.handOff()) return true;
    const mayHold = this.held || this.maybeHeld;
    const mayQueue = this.queued || this.maybeHeld;
    this.setQueued(false);
    if (!mayHold && !mayQueue) return true;
    const wasHeld = this.held;
    const owner = this.turn?.storeOwner ?? this.request.owner;
    this.turn = undefined;
    let freed = false;
    // One command on the common path (a held lock, no queue place): nothing to gather.
    if (mayHold && mayQueue) [freed] = await Promise.all([this.freeHeld(owner, holdMs), this.leaveQueue()]);
    else if (mayHold) freed = await this.freeHeld(owner, holdMs);
    else await this.leaveQueue();
    this.held = false;
    this.maybeHeld = false;
    return freed || !wasHeld;
  }

  private freeHeld(owner: string, holdMs: number | undefined): Promise<boolean> {
    const { client, idleKeyTtlMs } = this.context;
    if (this.reader) return releaseReadLock(client, this.keys, owner, RELEASED_MESSAGE, idleKeyTtlMs);
    if (holdMs !== undefined) return releaseHolding(client, this.keys, owner, holdMs, idleKeyTtlMs);
    const local = this.context.listener.waitersOf(this.keys.channel);
    return local ? this.releaseWriter(owner, local) : this.releaseWriterFreely(owner);
  }

  private leaveQueue(): Promise<unknown> {
    return leaveQueue(this.context.client, this.keys, this.entry, RELEASED_MESSAGE);
  }

  private renewed(owner: string, extended: Promise<boolean>): Promise<boolean> {
    const { replicas } = this.context;
    return replicas ? this.context.track(renewedOnReplicas(replicas, this.heldEntry(owner), extended)) : extended;
  }

  /** Where the store keeps this claim's hold: the lock key's value, or its owner's entry among the readers. */
  private heldEntry(owner: string): HeldEntry {
    return this.reader
      ? { key: this.keys.readers, owner, kind: 'member' }
      : { key: this.keys.lock, owner, kind: 'value' };
  }

  /** Drops an acquisition the replicas did not acknowledge; if that fails too, release() tries again. */
  private async undo(): Promise<void> {
    const { client } = this.context;
    const owner = this.request.owner;
    const idleMs = this.context.idleKeyTtlMs;
    await (
      this.reader
        ? releaseReadLock(client, this.keys, owner, RELEASED_MESSAGE, idleMs)
        : releaseLock(client, this.keys, owner, RELEASED_MESSAGE, idleMs)
    ).catch(() => (this.maybeHeld = true));
  }

  /**
   * Frees the key while no claim of this process waits for it: announced only if a claim of another
   * process flagged it as waited for (waiting-flag.ts). The common path: no promise over the script's.
   */
  private releaseWriterFreely(owner: string): Promise<boolean> {
    return releaseLockIfWaited(
      this.context.client,
      this.keys,
      owner,
      this.context.listener.releaseMessage,
      this.fenceIdleMs(),
      this.fenceUpkeep?.aheadMs,
    );
  }

  /**
   * Frees the key while claims of this process wait for it (`local`): announced, so they hear it; when
   * subscribers of other processes heard it too, this process's plain claims stand back for their turns.
   */
  private async releaseWriter(owner: string, local: ChannelWaiters): Promise<boolean> {
    // Its own announcement may arrive before the reply: stand back already for those that waited last time.
    if (this.plain) local.standBack(local.othersWaiting);
    const heard = await releaseLockHeard(
      this.context.client,
      this.keys,
      owner,
      this.context.listener.releaseMessage,
      this.fenceIdleMs(),
      this.fenceUpkeep?.aheadMs,
    );
    // This backend's own subscriber is one of those that heard it when claims of this process wait.
    if (this.plain && local.size > 0 && heard >= 0) local.standBack(heard - (local.isSubscribed ? 1 : 0));
    return heard >= 0;
  }

  /** The idle time the release gives the fence counter; none within the lease it was kept for, which already outlives the release by it. */
  private fenceIdleMs(): number | undefined {
    return this.fenceUpkeep?.outlivesRelease(this.context.driftFactor) ? undefined : this.context.idleKeyTtlMs;
  }

  /** The lock was handed over by a claim of this process: taken without a round trip. */
  private takeHandOff(fence: number): AttemptResult {
    this.handedFence = undefined;
    this.stopWaiting();
    return this.turn!.handedOver(fence);
  }

  /** Passes the held lock on within its turn (LocalTurn.passOn), if the turn allows. */
  private handOff(): boolean {
    const turn = this.turn;
    if (!turn || this.queued || !turn.passOn(this.context.listener.waitersOf(this.keys.channel))) return false;
    this.turn = undefined;
    this.held = false;
    return true;
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
