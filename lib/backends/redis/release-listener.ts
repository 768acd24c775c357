import { randomBytes } from 'node:crypto';
import { monotonicNow } from '../../util/clock.js';
import { withinMs } from '../../util/time-limit.js';
import { ChannelWaiters, ReleaseWaiter } from './channel-waiters.js';
import type { RedisClient } from './redis-client.js';
import { pubSubKindOf, type PubSubKind } from './sharded-pubsub.js';

/** How often a sharded subscriber re-reads the Cluster's slot map when the client does not say. */
const SLOTS_REFRESH_MS = 5_000;

/**
 * @internal The backend's one subscriber connection (a `duplicate()` of its client, opened on the
 * first wait, closed with the backend). Each lock's release channel is subscribed while at least
 * one claim of this backend waits for that lock, and unsubscribed when the last one leaves.
 *
 * Every release, this backend's own included, comes back as a message and wakes the oldest local
 * waiter: every process then gets one try at about the same moment (a process whose turn just ended
 * stands back; see ChannelWaiters.standBack). A release by this backend names it (`releaseMessage`).
 *
 * On a Cluster whose servers have sharded pub/sub, it is a `duplicate()` with ioredis'
 * `shardedSubscribers` (one connection per master that serves a watched channel) and SSUBSCRIBEs, as
 * releases SPUBLISH (sharded-pubsub.ts).
 */
export class ReleaseListener {
  /** What this backend's releases announce, so that it can tell them from other processes' releases. */
  readonly releaseMessage = `released:${randomBytes(6).toString('base64url')}`;
  private subscriber: RedisClient | undefined;
  private sharded = false;
  private readonly channels = new Map<string, ChannelWaiters>();
  private readyCount = 0;
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
    if (entry.subscription && this.subscriber) this.unsubscribe(this.subscriber, entry.channel).catch(() => undefined);
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
    if (!this.closed) this.subscriber?.disconnect(true);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.channels.values()) entry.wakeAll();
    this.channels.clear();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  private subscribe(entry: ChannelWaiters): Promise<boolean> {
    const attempt: Promise<boolean> = Promise.resolve()
      .then(() => pubSubKindOf(this.client))
      .then((kind) => {
        const subscriber = this.connection(kind);
        return this.sharded ? subscriber.ssubscribe!(entry.channel) : subscriber.subscribe(entry.channel);
      })
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

  private unsubscribe(subscriber: RedisClient, channel: string): Promise<unknown> {
    return this.sharded ? subscriber.sunsubscribe!(channel) : subscriber.unsubscribe(channel);
  }

  private connection(kind: PubSubKind): RedisClient {
    if (this.closed) throw new Error('the backend is closed');
    if (this.subscriber) return this.subscriber;
    // pubSubKindOf is 'plain' for anything but a Cluster.
    this.sharded = kind === 'sharded';
    const subscriber = this.duplicate();
    subscriber.on(this.sharded ? 'smessage' : 'message', (channel: string, message: string) =>
      this.channels.get(channel)?.heardRelease(message !== this.releaseMessage),
    );
    // Messages sent while it was reconnecting are lost: treat the reconnection as a possible release.
    const wakeAll = () => {
      for (const entry of this.channels.values()) entry.wakeOne();
    };
    subscriber.on('ready', () => {
      if (this.readyCount++ === 0) return;
      if (!this.client.isCluster) this.resubscribeAll();
      wakeAll();
    });
    // A Cluster's sharded subscribers are not its own connection: each is replaced (and its channels
    // subscribed again) on a lost connection or a slot move, after which ioredis emits this.
    if (this.sharded) subscriber.on('subscribersReady', wakeAll);
    // Failures surface on the commands; without a listener ioredis would log every reconnect attempt.
    subscriber.on('error', () => undefined);
    this.subscriber = subscriber;
    return subscriber;
  }

  private duplicate(): RedisClient {
    if (!this.client.isCluster) {
      // No ready check: its INFO would be refused once a SUBSCRIBE sent between connect and ready put
      // the connection in subscriber mode, and ioredis would fail that SUBSCRIBE with it.
      return this.client.duplicate({ enableReadyCheck: false, autoResubscribe: false });
    }
    if (!this.sharded) return this.client.duplicate();
    // A moved slot only unsubscribes its channels on the old master: the subscriber learns of it when
    // it refreshes its slot map (then subscribes again on the new one), which ioredis does not do
    // periodically unless asked.
    const { slotsRefreshInterval } = (this.client.options ?? {}) as { slotsRefreshInterval?: number };
    return this.client.duplicate([], {
      shardedSubscribers: true,
      slotsRefreshInterval: slotsRefreshInterval || SLOTS_REFRESH_MS,
    });
  }
}
