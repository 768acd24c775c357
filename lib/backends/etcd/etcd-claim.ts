import type { Etcd3, IRangeResponse, IRequestOp, ITxnResponse } from 'etcd3';
import { monotonicNow } from '../../engine/clock.js';
import { isShared } from '../../engine/lock-mode.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../lock-backend.js';
import { LockKeys, prefixEnd } from './etcd-keys.js';
import type { GrantedLease, LeaseBound, LeaseKeeper } from './etcd-lease.js';
import { waitForKeyChange } from './etcd-wait.js';

/** @internal What every claim of one backend shares. */
export interface EtcdContext {
  readonly client: Etcd3;
  readonly leases: LeaseKeeper;
  /** Longest single wait before looking again, in case a watch event never comes. */
  readonly fallbackWaitMs: number;
  isLeaseNotFound(error: unknown): boolean;
}

/** etcd's RangeRequest enums (SortOrder.Descend, SortTarget.Create), as numbers: the driver is imported for types only. */
const DESCEND = 2;
const BY_CREATE_REVISION = 2;
/** Tries to take a place in the queue before giving up on a flapping lease. */
const MAX_ENQUEUE_TRIES = 4;

/** This claim's key in etcd: its create revision is its place in the queue and its fence. */
interface Place {
  readonly revision: number;
  readonly lease: GrantedLease;
}

type Look = { readonly ahead: Buffer; readonly fromRevision: number } | { readonly ahead?: undefined; readonly revision: number } | 'requeue';

/**
 * @internal
 * One acquisition on etcd, as etcd's own concurrency mutex does it: a key bound to the backend's
 * lease, put on the first attempt; the holder is the lowest create revision under the lock's
 * prefix (a reader: no write key below it); a waiter watches only the key just ahead of it.
 */
export class EtcdClaim implements LockClaim, LeaseBound {
  private readonly keys: LockKeys;
  private readonly ownKey: Buffer;
  private place: Place | undefined;
  private boundTo: GrantedLease | undefined;
  private ahead: { key: Buffer; fromRevision: number } | undefined;
  private held = false;
  private everAcquired = false;
  private putSent = false;
  private wakeWaiter: (() => void) | undefined;

  constructor(
    private readonly context: EtcdContext,
    private readonly request: ClaimRequest,
  ) {
    this.keys = new LockKeys(request.key);
    this.ownKey = this.keys.claimKey(request.mode, request.owner);
  }

  async tryAcquire(): Promise<AttemptResult> {
    const startedAt = monotonicNow();
    for (let tries = 0; ; ) {
      const place = this.place && !this.place.lease.dead ? this.place : undefined;
      const look = place ? await this.lookFrom(place) : await this.enqueue();
      if (look === 'requeue') {
        this.place = undefined;
        if (++tries >= MAX_ENQUEUE_TRIES) throw new Error('could not keep a place in the queue: the etcd lease keeps being lost');
        continue;
      }
      if (look.ahead) {
        this.ahead = { key: look.ahead, fromRevision: look.fromRevision };
        return { acquired: false };
      }
      this.ahead = undefined;
      this.held = true;
      this.everAcquired = true;
      const validityMs = await this.validity(this.request.leaseMs, startedAt);
      if (validityMs !== undefined) return { acquired: true, fence: look.revision, validityMs };
      // The lease was lost while we looked (before the engine could be told): queue again.
      this.held = false;
      if (++tries >= MAX_ENQUEUE_TRIES) throw new Error('could not keep a place in the queue: the etcd lease keeps being lost');
    }
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    const ahead = this.ahead;
    if (!ahead || !this.place) return;
    const wake = new AbortController();
    this.wakeWaiter = () => wake.abort();
    const maxWaitMs = Math.min(maxMs, this.context.fallbackWaitMs);
    await waitForKeyChange(this.context.client, ahead.key, ahead.fromRevision, maxWaitMs, AbortSignal.any([signal, wake.signal]));
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

  async release(): Promise<boolean> {
    const wasHeld = this.held;
    const place = this.place;
    const lease = this.boundTo;
    this.held = false;
    this.place = undefined;
    this.ahead = undefined;
    this.unbind();
    this.wakeWaiter?.();
    if (!this.putSent) return true;
    let deleted: boolean;
    try {
      deleted = place
        ? (await this.context.client.if(this.ownKey, 'Create', '==', place.revision).then({ request_delete_range: { key: this.ownKey } }).commit()).succeeded
        : (await this.context.client.delete().key(this.ownKey)).deleted !== '0';
    } catch (error) {
      // A key that cannot be deleted must not be kept alive: give its lease up, so it lapses within the TTL.
      if (lease) this.context.leases.drop(lease, 'a lock on it could not be deleted (etcd unreachable?)');
      throw error;
    }
    return !this.everAcquired || (wasHeld && deleted);
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

  /** Puts this claim's key and reads the key just ahead of it, in one transaction. */
  private async enqueue(): Promise<Look> {
    const lease = await this.context.leases.get();
    if (this.boundTo !== lease) this.unbind();
    this.boundTo = lease;
    lease.bound.add(this);
    this.putSent = true;
    let response: ITxnResponse;
    try {
      response = await this.context.client
        .if(this.ownKey, 'Create', '==', 0)
        .then(this.aheadQuery(undefined), { request_put: { key: this.ownKey, value: Buffer.from(this.request.owner), lease: lease.id } })
        // Only a put of an earlier attempt whose answer was lost can be there: remove it and queue again.
        .else({ request_delete_range: { key: this.ownKey } })
        .commit();
    } catch (error) {
      if (!this.context.isLeaseNotFound(error)) throw error;
      this.context.leases.drop(lease, 'etcd no longer knows the lease');
      return 'requeue';
    }
    if (!response.succeeded || lease.dead) return 'requeue';
    const revision = Number(response.header.revision);
    this.place = { revision, lease };
    return this.lookResult(response.responses[0]!.response_range, revision, revision + 1);
  }

  /** Reads the key just ahead of this claim's, if this claim's key is still there. */
  private async lookFrom(place: Place): Promise<Look> {
    const response = await this.context.client.if(this.ownKey, 'Create', '==', place.revision).then(this.aheadQuery(place.revision)).commit();
    // Our key is gone (deleted behind our back): the place in the queue is lost.
    if (!response.succeeded) return 'requeue';
    return this.lookResult(response.responses[0]!.response_range, place.revision, Number(response.header.revision) + 1);
  }

  private lookResult(range: IRangeResponse, revision: number, fromRevision: number): Look {
    const ahead = range.kvs[0];
    return ahead ? { ahead: ahead.key, fromRevision } : { revision };
  }

  /**
   * The last key ahead of `revision` (all keys, when this claim's put comes after the read) that
   * this claim must wait for: any claim for a writer, a write claim for a reader.
   */
  private aheadQuery(revision: number | undefined): IRequestOp {
    const prefix = isShared(this.request.mode) ? this.keys.writePrefix : this.keys.prefix;
    return {
      request_range: {
        key: prefix,
        range_end: prefixEnd(prefix),
        sort_order: DESCEND,
        sort_target: BY_CREATE_REVISION,
        limit: 1,
        keys_only: true,
        ...(revision === undefined ? {} : { max_create_revision: revision - 1 }),
      },
    };
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
    this.boundTo?.bound.delete(this);
    this.boundTo = undefined;
  }
}
