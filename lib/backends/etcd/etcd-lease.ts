import type { Etcd3, Lease } from 'etcd3';
import { monotonicNow } from '../../engine/clock.js';

/** @internal Something bound to an etcd lease (a claim whose key carries it), told when the lease is gone. */
export interface LeaseBound {
  leaseLost(reason: string): void;
}

/**
 * @internal
 * One etcd lease, kept alive by the client. `aliveUntil` is a lower bound of when etcd expires it
 * (monotonic ms): the send time of the last acknowledged grant or keepalive, plus the TTL.
 */
export class GrantedLease {
  id = '';
  aliveUntil = 0;
  dead = false;
  readonly bound = new Set<LeaseBound>();
  /** Send times of keepalives not acknowledged yet, oldest first (the stream answers in order). */
  private readonly inFlight: number[] = [];

  constructor(
    readonly lease: Lease,
    private readonly ttlMs: number,
  ) {
    lease.on('keepaliveEstablished', () => this.inFlight.splice(0));
    lease.on('keepaliveFailed', () => this.inFlight.splice(0));
    lease.on('keepaliveFired', () => this.inFlight.push(monotonicNow()));
    lease.on('keepaliveSucceeded', () => {
      const sentAt = this.inFlight.shift();
      if (sentAt !== undefined) this.confirm(sentAt);
    });
  }

  /** etcd refreshed the lease after `sentAt` (a grant or keepalive sent then was answered). */
  confirm(sentAt: number): void {
    this.aliveUntil = Math.max(this.aliveUntil, sentAt + this.ttlMs);
  }
}

/**
 * @internal
 * The backend's one lease: granted lazily, kept alive by etcd3, replaced by a new one after it is
 * lost. Everything bound to a lost lease is told, so held locks report loss and waiters re-queue.
 */
export class LeaseKeeper {
  private current: { granted: GrantedLease; ready: Promise<GrantedLease> } | undefined;
  private closed = false;

  constructor(
    private readonly client: Etcd3,
    readonly ttlSeconds: number,
    private readonly requestTimeoutMs: number,
  ) {}

  get ttlMs(): number {
    return this.ttlSeconds * 1000;
  }

  /** The live lease, granting one if there is none. Rejects when etcd cannot grant it. */
  get(): Promise<GrantedLease> {
    if (this.closed) return Promise.reject(new Error('the etcd backend is closed'));
    this.current ??= this.grant();
    return this.current.ready;
  }

  /** Sends one keepalive now and waits for etcd's answer (when the automatic ones fall behind). */
  async refresh(granted: GrantedLease): Promise<void> {
    const sentAt = monotonicNow();
    await granted.lease.keepaliveOnce({ deadline: Date.now() + this.requestTimeoutMs });
    if (!granted.dead) granted.confirm(sentAt);
  }

  /**
   * Gives a lease up: revokes it (best effort) and stops keeping it alive, so its keys go within
   * the TTL even if etcd cannot be reached now; tells everything bound to it.
   */
  drop(granted: GrantedLease, reason: string): void {
    if (this.current?.granted === granted) this.current = undefined;
    if (granted.dead) return;
    granted.dead = true;
    granted.lease.revoke({ deadline: Date.now() + this.requestTimeoutMs }).catch(() => undefined);
    for (const bound of [...granted.bound]) bound.leaseLost(reason);
    granted.bound.clear();
  }

  /** Revokes the current lease (its keys vanish at once). */
  async close(): Promise<void> {
    this.closed = true;
    const current = this.current;
    this.current = undefined;
    if (!current) return;
    const granted = await current.ready.catch(() => undefined);
    if (!granted || granted.dead) return;
    granted.dead = true;
    await granted.lease.revoke({ deadline: Date.now() + this.requestTimeoutMs }).catch(() => undefined);
  }

  private grant(): { granted: GrantedLease; ready: Promise<GrantedLease> } {
    const sentAt = monotonicNow();
    const lease = this.client.lease(this.ttlSeconds);
    const granted = new GrantedLease(lease, this.ttlMs);
    lease.on('lost', (error: Error) => this.drop(granted, `the etcd lease expired or was revoked (${error.message})`));
    const ready = lease.grant().then(
      (id) => {
        granted.id = id;
        granted.confirm(sentAt);
        if (granted.dead) throw new Error('the etcd lease was lost right after it was granted');
        return granted;
      },
      (error: unknown) => {
        this.drop(granted, 'the etcd lease could not be granted');
        throw error;
      },
    );
    ready.catch(() => undefined);
    return { granted, ready };
  }
}
