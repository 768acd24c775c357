import { randomBytes } from 'node:crypto';
import { monotonicNow } from '../../util/clock.js';
import { withinMs } from '../../util/time-limit.js';
import { ChannelWaiters, ReleaseWaiter } from './channel-waiters.js';
import type { RedisClient } from './redis-client.js';
import { ShardSubscriptions, type ShardedCluster } from './shard-subscriptions.js';
import { pubSubKindOf, type PubSubKind } from './sharded-pubsub.js';

/** @internal How the listener subscribes: one connection, or one per Cluster master (ShardSubscriptions). */
interface Subscriptions {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  /** Replaces the connections; they subscribe their channels again. */
  reconnect(): void;
  close(): void;
}

/**
 * @internal The backend's subscriber connection (a `duplicate()` of its client, opened on the
 * first wait, closed with the backend). Each lock's release channel is subscribed while at least
 * one claim of this backend waits for that lock, and unsubscribed when the last one leaves.
 *
 * Every release, this backend's own included, comes back as a message and wakes the oldest local
 * waiter: every process then gets one try at about the same moment (a process whose turn just ended
 * stands back; see ChannelWaiters.standBack). A release by this backend names it (`releaseMessage`).
 *
 * On a Cluster whose servers have sharded pub/sub, one connection per master instead, which
 * SSUBSCRIBEs each channel on the master of its slot (ShardSubscriptions), as releases SPUBLISH
 * there (sharded-pubsub.ts).
 */
export class ReleaseListener {
  /** What this backend's releases announce, so that it can tell them from other processes' releases. */
  readonly releaseMessage = `released:${randomBytes(6).toString('base64url')}`;
  private subscriber: Subscriptions | undefined;
  private readonly channels = new Map<string, ChannelWaiters>();
  private closed = false;

  constructor(private readonly client: RedisClient) {}

  /** Joins the waiters of `channel`. Subscribes when it is the first; the caller must `leave` later. */
  join(channel: string, waiter: ReleaseWaiter): ChannelWaiters {
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = new ChannelWaiters(channel);
      this.channels.set(channel, entry);
    }
    entry.add(waiter);
    return entry;
  }

  leave(entry: ChannelWaiters, waiter: ReleaseWaiter): void {
    entry.remove(waiter);
    if (entry.size > 0 || this.channels.get(entry.channel) !== entry) return;
    this.channels.delete(entry.channel);
    // Commands on one connection run in order, so a later SUBSCRIBE of the same channel wins.
    if (entry.subscription && this.subscriber) this.subscriber.unsubscribe(entry.channel).catch(() => undefined);
  }

  /** The claims of this backend waiting on `channel`, if any. */
  waitersOf(channel: string): ChannelWaiters | undefined {
    // Nobody waits anywhere (the uncontended case): no lookup, whose first use of the channel name hashes it.
    return this.channels.size === 0 ? undefined : this.channels.get(channel);
  }

  /** Waits, up to `maxMs`, for the channel's subscription; resolves whether it is active. Never rejects. */
  async subscribed(entry: ChannelWaiters, maxMs: number, signal: AbortSignal): Promise<boolean> {
    if (this.closed) return false;
    if (entry.isSubscribed) return true;
    entry.subscription ??= this.subscribe(entry);
    return withinMs(entry.subscription, maxMs, { signal }).catch(() => false);
  }

  /**
   * Sleeps until a release on `entry`'s channel wakes `waiter`, `maxMs` passes or `signal` aborts;
   * returns at once when a release may have gone unseen (announced before the subscription was
   * active, or while the waiter was not asleep). Without a subscription it sleeps `maxMs`, the
   * engine's bound. Never rejects: the engine simply tries again.
   */
  async wait(entry: ChannelWaiters, waiter: ReleaseWaiter, maxMs: number, signal: AbortSignal): Promise<void> {
    try {
      const startedAt = monotonicNow();
      const subscribed = await this.subscribed(entry, maxMs, signal);
      if (subscribed && (entry.activeSince >= waiter.lastTryAt || entry.takePending())) return;
      await waiter.sleep(maxMs - (monotonicNow() - startedAt), signal);
    } catch {
      // Nothing to report: the next attempt tells the engine what the store says.
    }
  }

  /** Replaces the subscriber's connection (its client's connection was stuck: this one likely is too). It resubscribes on its own. */
  reconnect(): void {
    if (!this.closed) this.subscriber?.reconnect();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.channels.values()) entry.wakeAll();
    this.channels.clear();
    this.subscriber?.close();
    this.subscriber = undefined;
  }

  private subscribe(entry: ChannelWaiters): Promise<boolean> {
    const attempt: Promise<boolean> = Promise.resolve()
      .then(() => pubSubKindOf(this.client))
      .then((kind) => this.subscriptions(kind).subscribe(entry.channel))
      .then(
        () => {
          entry.activeSince = monotonicNow();
          return true;
        },
        () => {
          // A later wait subscribes again.
          if (entry.subscription === attempt) entry.subscription = undefined;
          return false;
        },
      );
    return attempt;
  }

  private subscriptions(kind: PubSubKind): Subscriptions {
    if (this.closed) throw new Error('the backend is closed');
    // pubSubKindOf is 'plain' for anything but a Cluster.
    this.subscriber ??=
      kind === 'sharded'
        ? new ShardSubscriptions(this.client as ShardedCluster, { message: this.heard, resumed: this.wakeAll })
        : this.plainSubscriptions();
    return this.subscriber;
  }

  private readonly heard = (channel: string, message: string): void => {
    this.channels.get(channel)?.heardRelease(message !== this.releaseMessage);
  };

  /** Messages sent while a connection was away are lost: a reconnection may hide a release. */
  private readonly wakeAll = (): void => {
    for (const entry of this.channels.values()) entry.wakeOne();
  };

  /** One connection (a `duplicate()` of the client) that SUBSCRIBEs. */
  private plainSubscriptions(): Subscriptions {
    const connection = this.client.isCluster
      ? this.client.duplicate()
      : // No ready check: its INFO would be refused once a SUBSCRIBE sent between connect and ready put
        // the connection in subscriber mode, and ioredis would fail that SUBSCRIBE with it.
        this.client.duplicate({ enableReadyCheck: false, autoResubscribe: false });
    connection.on('message', this.heard);
    let readyCount = 0;
    connection.on('ready', () => {
      if (readyCount++ === 0) return;
      if (!this.client.isCluster) this.resubscribeAll();
      this.wakeAll();
    });
    // Failures surface on the commands; without a listener ioredis would log every reconnect attempt.
    connection.on('error', () => undefined);
    return {
      subscribe: (channel) => connection.subscribe(channel),
      unsubscribe: (channel) => connection.unsubscribe(channel),
      reconnect: () => connection.disconnect(true),
      close: () => connection.disconnect(),
    };
  }

  /**
   * A reconnected connection subscribes its channels again. ioredis' own `autoResubscribe` would, but
   * leaves its SUBSCRIBE's promise unhandled: a server that accepts the connection and does not answer
   * (a failover in progress, a stopped process) made it an unhandled rejection at the command timeout.
   */
  private resubscribeAll(): void {
    for (const entry of this.channels.values()) {
      if (entry.subscription === undefined) continue;
      entry.activeSince = Infinity;
      entry.subscription = this.subscribe(entry);
    }
  }
}
