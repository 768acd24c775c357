import type { Etcd3, Lease } from 'etcd3';
import { monotonicNow, sleep, unrefSleep, unrefTimer } from '../../util/clock.js';

/** @internal Something bound to an etcd lease (a claim whose key carries it), told when the lease is gone. */
export interface LeaseBound {
  leaseLost(reason: string): void;
}

/**
 * @internal
 * One etcd lease. `aliveUntil` is a lower bound of when etcd expires it (monotonic ms): the send
 * time of the last acknowledged grant or keepalive, plus the TTL. A retiring lease takes no new
 * claims and is revoked once nothing is bound to it.
 */
export class GrantedLease {
  id = '';
  aliveUntil = 0;
  dead = false;
  retiring = false;
  readonly bound = new Set<LeaseBound>();
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly lease: Lease,
    private readonly ttlMs: number,
  ) {}

  /** etcd refreshed the lease after `sentAt` (a grant or keepalive sent then was answered). */
  confirm(sentAt: number): void {
    this.aliveUntil = Math.max(this.aliveUntil, sentAt + this.ttlMs);
  }
}

/**
 * @internal
 * The backend's lease: granted lazily, replaced by a new one after it is lost or retired. Everything
 * bound to a lost lease is told, so held locks report loss and waiters re-queue.
 *
 * Keepalives are sent every third of the TTL, each on a stream of its own through whichever member
 * etcd3's pool picks (a member that went unanswered is passed over), and retried on another member
 * when one goes unanswered for its share of the request timeout: a member that hangs with its
 * connection open does not take the lease with it, as etcd3's one long-lived keepalive stream would
 * (it notices only after a whole TTL). Once no keepalive was answered for the TTL, the lease may be
 * gone at etcd: it is dropped, and its locks reported lost.
 */
export class LeaseKeeper {
  private current: { granted: GrantedLease; ready: Promise<GrantedLease> } | undefined;
  private closed = false;

  constructor(
    private readonly client: Etcd3,
    readonly ttlSeconds: number,
    private readonly requestTimeoutMs: number,
    /** The deadline of one attempt of a call (a share of the request timeout). */
    readonly attemptMs: number = requestTimeoutMs,
    /** Whether a call went unanswered (etcd may not have seen it): a revoke is then tried again. */
    private readonly isUnanswered: (error: unknown) => boolean = () => false,
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

  /** Sends a keepalive now (on other members if one goes unanswered) and waits for etcd's answer, within the request timeout. */
  refresh(granted: GrantedLease): Promise<void> {
    return this.keepalive(granted, this.requestTimeoutMs);
  }

  /**
   * A call bound to this lease may still be applied by etcd after its caller moved on (an attempt
   * went unanswered): new claims get a new lease, and this one is revoked once its claims are
   * gone, taking with it any key such a late call puts.
   */
  retire(granted: GrantedLease): void {
    if (this.current?.granted === granted) this.current = undefined;
    granted.retiring = true;
    if (granted.bound.size === 0) this.drop(granted, 'the etcd lease was retired');
  }

  /** `bound` no longer needs the lease; a retiring lease is revoked once nothing is bound to it. */
  unbind(granted: GrantedLease, bound: LeaseBound): void {
    granted.bound.delete(bound);
    if (granted.retiring && granted.bound.size === 0) this.drop(granted, 'the etcd lease was retired');
  }

  /**
   * Gives a lease up: stops keeping it alive, so its keys go within the TTL even if etcd cannot be
   * reached now, and revokes it (see {@link revokeSoon}); tells everything bound to it.
   */
  drop(granted: GrantedLease, reason: string): void {
    if (this.current?.granted === granted) this.current = undefined;
    if (granted.dead) return;
    granted.dead = true;
    clearTimeout(granted.timer);
    this.revokeSoon(granted);
    for (const bound of [...granted.bound]) bound.leaseLost(reason);
    granted.bound.clear();
  }

  /**
   * Revokes a dropped lease, trying again while the revoke goes unanswered (etcd electing a leader,
   * or this client cut off), for one TTL plus {@link REVOKE_RETRY_EXTRA_MS}: a new leader gives every
   * lease a fresh TTL (plus an election timeout), so a lease dropped because etcd could not be
   * reached may outlive its TTL by an election, and its keys with it, unless it is revoked. Each
   * revoke is a plain call: a share of the request timeout per member tried, as every call.
   */
  private revokeSoon(granted: GrantedLease): void {
    const giveUpAt = monotonicNow() + this.ttlMs + REVOKE_RETRY_EXTRA_MS;
    const revoke = async (): Promise<void> => {
      while (!this.closed) {
        try {
          await granted.lease.revoke();
          return;
        } catch (error) {
          // A lease whose grant was never answered has no id to revoke by: it goes with its TTL.
          if (!granted.id || !this.isUnanswered(error) || monotonicNow() + REVOKE_RETRY_MS >= giveUpAt) return;
          await unrefSleep(REVOKE_RETRY_MS);
        }
      }
    };
    void revoke();
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
    clearTimeout(granted.timer);
    await granted.lease.revoke().catch(() => undefined);
  }

  private grant(): { granted: GrantedLease; ready: Promise<GrantedLease> } {
    const sentAt = monotonicNow();
    const lease = this.client.lease(this.ttlSeconds, { autoKeepAlive: false });
    const granted = new GrantedLease(lease, this.ttlMs);
    lease.on('lost', (error: Error) => this.drop(granted, `the etcd lease expired or was revoked (${error.message})`));
    const ready = lease.grant().then(
      (id) => {
        granted.id = id;
        granted.confirm(sentAt);
        if (granted.dead) throw new Error('the etcd lease was lost right after it was granted');
        this.keepAliveLater(granted, this.ttlMs / 3);
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

  /** The keepalive loop: every third of the TTL; at once again after a failed round, until the lease may have expired. */
  private keepAliveLater(granted: GrantedLease, delayMs: number): void {
    granted.timer = unrefTimer(() => {
      const periodMs = this.ttlMs / 3;
      this.keepalive(granted, periodMs).then(
        () => this.keepAliveLater(granted, periodMs),
        () => {
          if (granted.dead) return;
          if (monotonicNow() >= granted.aliveUntil)
            this.drop(granted, 'no keepalive of the etcd lease was answered within its TTL (etcd unreachable?)');
          else this.keepAliveLater(granted, KEEPALIVE_RETRY_MS);
        },
      );
    }, delayMs);
  }

  /** One keepalive, tried again (on the member etcd3's pool picks next) while `budgetMs` lasts. */
  private async keepalive(granted: GrantedLease, budgetMs: number): Promise<void> {
    const endsAt = monotonicNow() + budgetMs;
    for (;;) {
      const sentAt = monotonicNow();
      if (granted.dead) throw new Error('the etcd lease is gone');
      try {
        await granted.lease.keepaliveOnce({
          deadline: Date.now() + Math.max(1, Math.min(this.attemptMs, endsAt - sentAt)),
        });
        if (!granted.dead) granted.confirm(sentAt);
        return;
      } catch (error) {
        if (granted.dead || monotonicNow() + KEEPALIVE_RETRY_MS >= endsAt) throw error;
        await sleep(KEEPALIVE_RETRY_MS);
      }
    }
  }
}

/** Pause between keepalive attempts that failed. */
const KEEPALIVE_RETRY_MS = 25;
/** Pause between revokes that went unanswered. */
const REVOKE_RETRY_MS = 100;
/** How much longer than a TTL a dropped lease's revoke is tried: an election, with room to spare. */
const REVOKE_RETRY_EXTRA_MS = 10_000;
