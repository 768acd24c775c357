import type { Etcd3, IKeyValue, IRangeResponse, IRequestOp, ITxnResponse } from 'etcd3';
import { monotonicNow, unrefSleep } from '../../util/clock.js';
import { withinMs } from '../../util/time-limit.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../../engine/lock-backend.js';
import { noticeUnansweredAttempts } from './etcd-fault-handling.js';
import type { GrantedLease, LeaseBound, LeaseKeeper } from './etcd-lease.js';

/** @internal What every claim of one backend shares. */
export interface EtcdContext {
  readonly client: Etcd3;
  readonly leases: LeaseKeeper;
  /** Longest single wait before looking again, in case a watch event never comes. */
  readonly fallbackWaitMs: number;
  /** A watch heard nothing for `fallbackWaitMs`: a member may hang (see MemberHealth.checkMembers). Resolves once they are checked; never rejects. */
  silentWatch(): Promise<void>;
  isLeaseNotFound(error: unknown): boolean;
  /** Whether a call went unanswered (deadline exceeded, member unreachable): etcd may not have seen it. */
  isUnanswered(error: unknown): boolean;
}

/** Tries to take a place in the queue before giving up on a flapping lease. */
const MAX_ENQUEUE_TRIES = 4;
/** Pause between tries of a release that reached no leader. */
const RELEASE_RETRY_MS = 100;

/** Why a lease is given up when a lock on it could not be deleted. */
const UNDELETED = 'a lock on it could not be deleted (etcd unreachable?)';

/** This claim's key in etcd: its create revision is its place in the queue and its fence. */
interface Place {
  readonly revision: number;
  readonly lease: GrantedLease;
}

type Look<Wait> =
  { readonly held: false; readonly wait: Wait } | { readonly held: true; readonly revision: number } | 'requeue';

/**
 * @internal
 * A place in an etcd queue, as etcd's own concurrency recipes keep it: a key bound to the backend's
 * lease, put on the first attempt, whose create revision orders it among the others; the put and
 * the first look at the keys ahead are one transaction, and later looks check that the key is still
 * there. Subclasses say which keys ahead matter (`aheadQuery`), when the claim holds (`waitFrom`),
 * and what to watch while it waits (`watch`). Giving up or releasing deletes the key.
 */
export abstract class EtcdQueueClaim<Wait> implements LockClaim, LeaseBound {
  private place: Place | undefined;
  private boundTo: GrantedLease | undefined;
  private waitingFor: Wait | undefined;
  private held = false;
  private everAcquired = false;
  private putSent = false;
  private wakeWaiter: (() => void) | undefined;

  constructor(
    protected readonly context: EtcdContext,
    protected readonly request: ClaimRequest,
    /** This claim's key. */
    private readonly ownKey: Buffer,
  ) {}

  /** The read, inside the transaction, of the keys ahead of `revision` (of all keys, when this claim's put comes after it). */
  protected abstract aheadQuery(revision: number | undefined): IRequestOp;
  /** What to wait for, from the keys ahead of this claim's `revision` as read at `fromRevision - 1`; undefined: it holds. */
  protected abstract waitFrom(range: IRangeResponse, revision: number, fromRevision: number): Wait | undefined;
  /**
   * Resolves when what this claim waits for may have happened, after `maxMs`, or when `signal`
   * aborts: `true` when `maxMs` passed with nothing heard. Never rejects.
   */
  protected abstract watch(wait: Wait, maxMs: number, signal: AbortSignal): Promise<boolean>;

  async tryAcquire(): Promise<AttemptResult> {
    const startedAt = monotonicNow();
    for (let tries = 0; ;) {
      const place = this.place && !this.place.lease.dead ? this.place : undefined;
      const look = place ? await this.lookFrom(place) : await this.enqueue();
      if (look === 'requeue') {
        this.place = undefined;
        if (++tries >= MAX_ENQUEUE_TRIES)
          throw new Error('could not keep a place in the queue: the etcd lease keeps being lost');
        continue;
      }
      if (!look.held) {
        this.waitingFor = look.wait;
        return { acquired: false };
      }
      this.waitingFor = undefined;
      this.held = true;
      this.everAcquired = true;
      const validityMs = await this.validity(this.request.leaseMs, startedAt);
      if (validityMs !== undefined) return { acquired: true, fence: look.revision, validityMs };
      // The lease was lost while we looked (before the engine could be told): queue again.
      this.held = false;
      if (++tries >= MAX_ENQUEUE_TRIES)
        throw new Error('could not keep a place in the queue: the etcd lease keeps being lost');
    }
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    const waitingFor = this.waitingFor;
    if (waitingFor === undefined || !this.place) return;
    const startedAt = monotonicNow();
    const wake = new AbortController();
    this.wakeWaiter = () => wake.abort();
    const stop = AbortSignal.any([signal, wake.signal]);
    const fallback = maxMs >= this.context.fallbackWaitMs;
    const silent = await this.watch(waitingFor, fallback ? this.context.fallbackWaitMs : maxMs, stop);
    // Look again once the members are checked, within what is left of maxMs: a look sent at once could
    // land on the member that kept the watch silent, and wait out its share of the request timeout.
    if (silent && fallback) {
      const leftMs = maxMs - (monotonicNow() - startedAt);
      await withinMs(this.context.silentWatch(), leftMs, { signal: stop }).catch(() => undefined);
    }
    this.wakeWaiter = undefined;
  }

  async renew(leaseMs: number): Promise<number | false> {
    const startedAt = monotonicNow();
    const place = this.place;
    if (!this.held || !place || place.lease.dead) return false;
    const response = await this.context.client.if(this.ownKey, 'Create', '==', place.revision).commit();
    if (!response.succeeded || !this.held || this.place !== place || place.lease.dead) return false;
    return (await this.validity(leaseMs, startedAt)) ?? false;
  }

  async release(holdMs?: number): Promise<boolean> {
    const wasHeld = this.held;
    const place = this.place;
    const lease = this.boundTo;
    this.held = false;
    this.place = undefined;
    this.waitingFor = undefined;
    this.wakeWaiter?.();
    // Bound to the lease until the key is gone: a retiring lease is revoked once nothing is bound to
    // it, and a revoke that took the key first would make this release read as a lost lock.
    let finishing = false;
    try {
      if (!this.putSent) return true;
      if (holdMs !== undefined && wasHeld && place) return await this.keepFor(place, holdMs);
      const deleted = await this.deleteOwnKey(place);
      return !this.everAcquired || (wasHeld && deleted);
    } catch (error) {
      finishing = lease !== undefined && this.context.isUnanswered(error);
      if (finishing) this.finishRelease(place, lease!);
      // A key that cannot be deleted must not be kept alive: give its lease up, so it lapses within the TTL.
      else if (lease) this.context.leases.drop(lease, UNDELETED);
      throw error;
    } finally {
      if (!finishing) this.unbind();
    }
  }

  /**
   * Deletes this claim's key if it is still the one it put (by its create revision, when known).
   * Whether it deleted it, or may have: an attempt that went unanswered (and was tried again on
   * another member) may have deleted it before the attempt that answered looked.
   */
  private async deleteOwnKey(place: Place | undefined): Promise<boolean> {
    const { client } = this.context;
    let unanswered = false;
    const deleted = await noticeUnansweredAttempts(
      async () =>
        place
          ? (
              await client
                .if(this.ownKey, 'Create', '==', place.revision)
                .then({ request_delete_range: { key: this.ownKey } })
                .commit()
            ).succeeded
          : (await client.delete().key(this.ownKey)).deleted !== '0',
      () => (unanswered = true),
    );
    return deleted || unanswered;
  }

  /**
   * A release that reached no leader (etcd electing one, or this client cut off from the members
   * that have it) is tried again, on whichever member answers, until it lands, for one lease TTL at
   * most; then the lease is given up, as for a release etcd refused. Giving it up at once instead
   * would leave the key for a TTL after the election, or longer: a new leader gives every lease a
   * fresh TTL (plus an election timeout).
   */
  private finishRelease(place: Place | undefined, lease: GrantedLease): void {
    const giveUpAt = monotonicNow() + this.context.leases.ttlMs;
    const retry = async (): Promise<void> => {
      while (!lease.dead && monotonicNow() < giveUpAt) {
        await unrefSleep(RELEASE_RETRY_MS);
        try {
          await this.deleteOwnKey(place);
          return;
        } catch (error) {
          if (!this.context.isUnanswered(error)) break;
        }
      }
      this.context.leases.drop(lease, UNDELETED);
    };
    void retry().finally(() => this.unbind());
  }

  /**
   * minHoldMs: rebinds this claim's key (same create revision, so still first in the queue) to a
   * lease of its own with a TTL of `holdMs` rounded up to whole seconds (etcd's unit, and it may
   * raise a TTL to its minimum), so etcd deletes the key once the TTL has run, with nothing left
   * running here; the waiter watching the key sees the deletion. Whether the key was still ours.
   */
  private async keepFor(place: Place, holdMs: number): Promise<boolean> {
    const { client } = this.context;
    const { ID } = await client.leaseClient.leaseGrant({ TTL: Math.ceil(holdMs / 1000) });
    const response = await client
      .if(this.ownKey, 'Create', '==', place.revision)
      .then({ request_put: { key: this.ownKey, value: Buffer.from(this.request.owner), lease: ID } })
      .commit();
    if (!response.succeeded) await client.leaseClient.leaseRevoke({ ID }).catch(() => undefined);
    return response.succeeded;
  }

  /** The lease this claim's key is bound to is gone, and the key with it. */
  leaseLost(reason: string): void {
    this.place = undefined;
    this.boundTo = undefined;
    this.wakeWaiter?.();
    if (!this.held) return;
    this.held = false;
    try {
      this.request.onLost(reason);
    } catch {
      // Called from an event handler: never throw from here.
    }
  }

  /**
   * Puts this claim's key and reads the keys ahead of it, in one transaction. If an attempt of it
   * goes unanswered, etcd may still apply that attempt later, even after this claim is gone: the
   * lease is retired, so that such a key goes with it once the lease's other claims are gone.
   */
  private async enqueue(): Promise<Look<Wait>> {
    const lease = await this.context.leases.get();
    if (this.boundTo !== lease) this.unbind();
    this.boundTo = lease;
    lease.bound.add(this);
    this.putSent = true;
    let response: ITxnResponse;
    try {
      const txn = this.context.client
        .if(this.ownKey, 'Create', '==', 0)
        .then(this.aheadQuery(undefined), {
          request_put: { key: this.ownKey, value: Buffer.from(this.request.owner), lease: lease.id },
        })
        // Only a put of an earlier attempt whose answer was lost can be there. Read, never deleted here:
        // this transaction applied late must not remove the key a later attempt put.
        .else({ request_range: { key: this.ownKey } });
      response = await noticeUnansweredAttempts(
        () => txn.commit(),
        () => this.context.leases.retire(lease),
      );
    } catch (error) {
      if (!this.context.isLeaseNotFound(error)) throw error;
      this.context.leases.drop(lease, 'etcd no longer knows the lease');
      return 'requeue';
    }
    if (lease.dead) return 'requeue';
    if (!response.succeeded) return this.earlierPut(response.responses[0].response_range.kvs[0], lease);
    const revision = Number(response.header.revision);
    this.place = { revision, lease };
    return this.lookResult(response.responses[0].response_range, revision, revision + 1);
  }

  /** This claim's key was there already (an earlier attempt's): kept if it is on `lease`, else removed (by its revision) to queue again. */
  private async earlierPut(kv: IKeyValue | undefined, lease: GrantedLease): Promise<Look<Wait>> {
    if (!kv) return 'requeue';
    const revision = Number(kv.create_revision);
    if (kv.lease === lease.id && kv.value.toString() === this.request.owner) {
      this.place = { revision, lease };
      return this.lookFrom(this.place);
    }
    await this.context.client
      .if(this.ownKey, 'Create', '==', revision)
      .then({ request_delete_range: { key: this.ownKey } })
      .commit();
    return 'requeue';
  }

  /** Reads the keys ahead of this claim's, if this claim's key is still there. */
  private async lookFrom(place: Place): Promise<Look<Wait>> {
    const response = await this.context.client
      .if(this.ownKey, 'Create', '==', place.revision)
      .then(this.aheadQuery(place.revision))
      .commit();
    // Our key is gone (deleted behind our back): the place in the queue is lost.
    if (!response.succeeded) return 'requeue';
    return this.lookResult(response.responses[0].response_range, place.revision, Number(response.header.revision) + 1);
  }

  private lookResult(range: IRangeResponse, revision: number, fromRevision: number): Look<Wait> {
    const wait = this.waitFrom(range, revision, fromRevision);
    return wait === undefined ? { held: true, revision } : { held: false, wait };
  }

  /**
   * How long the key surely stays: up to `leaseMs`, but never past what etcd confirmed of the lease
   * (refreshed first when the automatic keepalives fall behind). `undefined` once the lease is lost.
   */
  private async validity(leaseMs: number, startedAt: number): Promise<number | undefined> {
    const lease = this.place?.lease;
    if (!lease || lease.dead) return undefined;
    if (lease.aliveUntil - monotonicNow() < this.context.leases.ttlMs / 2) {
      try {
        await this.context.leases.refresh(lease);
      } catch (error) {
        if (!lease.dead) throw error;
      }
    }
    if (lease.dead || this.place?.lease !== lease) return undefined;
    return Math.max(0, Math.min(leaseMs, Math.floor(lease.aliveUntil - startedAt)));
  }

  private unbind(): void {
    if (this.boundTo) this.context.leases.unbind(this.boundTo, this);
    this.boundTo = undefined;
  }
}
