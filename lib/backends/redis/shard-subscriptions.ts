import { keySlot } from './key-slot.js';
import type { RedisClient } from './redis-client.js';

/** How often the slot map is re-read while a channel is watched, when the client does not say. */
const SLOTS_REFRESH_MS = 5_000;
/** The longest a dropped connection waits before it connects again. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/** @internal What a Cluster client offers for routing sharded subscriptions by hand (ioredis' `Cluster`). */
export interface ShardedCluster extends RedisClient {
  /** Per slot, the node keys (`host:port`) serving it, the master's first. */
  readonly slots: readonly (readonly string[] | undefined)[];
  nodes(role: 'master'): RedisClient[];
  refreshSlotsCache(callback?: (error?: Error) => void): void;
}

/** @internal What the subscriptions report to the release listener. */
export interface ShardEvents {
  /** A message on a watched channel. */
  message(channel: string, message: string): void;
  /** Messages may have gone unheard: a connection came back, or a channel moved to another master. */
  resumed(): void;
}

/**
 * @internal Sharded subscriptions on a Cluster: each watched channel is `SSUBSCRIBE`d on the master
 * of its slot, through one connection per such master (a `duplicate()` of the Cluster's own
 * connection to it), which reconnects on its own and subscribes its channels again. A channel whose
 * slot moved is subscribed again on its new master when the slot map is next read (every 5 s while
 * a channel is watched, or the client's `slotsRefreshInterval`).
 *
 * Not ioredis' `shardedSubscribers`, which does the same but drops a connection by removing its
 * listeners first: an error reply still on its way (a server that refuses the connection: "max
 * number of clients reached", protected mode) is then an unhandled 'error' event, which ends the
 * process. These connections keep their listeners.
 */
export class ShardSubscriptions {
  /** Per master (node key), the connection subscribed there. */
  private readonly connections = new Map<string, RedisClient>();
  /** Per watched channel, the master it is subscribed on. */
  private readonly masterOfChannel = new Map<string, string>();
  private readonly refreshTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly cluster: ShardedCluster,
    private readonly events: ShardEvents,
  ) {
    this.cluster.on('refresh', this.followSlots);
    const { slotsRefreshInterval } = (cluster.options ?? {}) as { slotsRefreshInterval?: number };
    if (!slotsRefreshInterval) {
      this.refreshTimer = setInterval(() => this.refreshSlots(), SLOTS_REFRESH_MS);
      this.refreshTimer.unref();
    }
  }

  /** Whether `client` can route sharded subscriptions this way. */
  static canServe(client: RedisClient): client is ShardedCluster {
    const cluster = client as Partial<ShardedCluster>;
    return (
      Array.isArray(cluster.slots) &&
      typeof cluster.nodes === 'function' &&
      typeof cluster.refreshSlotsCache === 'function'
    );
  }

  /** SSUBSCRIBEs `channel` on its master. Rejects when that failed (a later call tries again). */
  subscribe(channel: string): Promise<unknown> {
    const master = this.masterOf(channel);
    const connection = master === undefined ? undefined : this.connectionTo(master);
    if (!connection) {
      this.refreshSlots();
      return Promise.reject(new Error(`no known master serves the slot of ${channel}`));
    }
    this.masterOfChannel.set(channel, master!);
    return connection.ssubscribe!(channel).catch((error: unknown) => {
      // A MOVED answer: the slot map is out of date.
      this.refreshSlots();
      if (this.masterOfChannel.get(channel) === master) this.masterOfChannel.delete(channel);
      throw error;
    });
  }

  unsubscribe(channel: string): Promise<unknown> {
    const master = this.masterOfChannel.get(channel);
    this.masterOfChannel.delete(channel);
    const connection = master === undefined ? undefined : this.connections.get(master);
    return connection ? connection.sunsubscribe!(channel) : Promise.resolve();
  }

  /** Replaces every connection (the Cluster's connections were stuck: these likely are too). */
  reconnect(): void {
    if (!this.closed) for (const connection of this.connections.values()) connection.disconnect(true);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.refreshTimer);
    this.cluster.off('refresh', this.followSlots);
    for (const connection of this.connections.values()) connection.disconnect();
    this.connections.clear();
    this.masterOfChannel.clear();
  }

  private masterOf(channel: string): string | undefined {
    return this.cluster.slots[keySlot(channel)]?.[0];
  }

  private connectionTo(master: string): RedisClient | undefined {
    const existing = this.connections.get(master);
    if (existing) return existing;
    const node = this.cluster.nodes('master').find((candidate) => nodeKey(candidate) === master);
    if (!node) return undefined;
    const connection = node.duplicate({
      // No ready check: its INFO would be refused once the connection is in subscriber mode.
      enableReadyCheck: false,
      // Subscribed again below: ioredis' own resubscription leaves its promise unhandled.
      autoResubscribe: false,
      enableOfflineQueue: true,
      lazyConnect: false,
      // The Cluster's node connections do not reconnect (the Cluster replaces them); this one does.
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, MAX_RECONNECT_DELAY_MS),
    });
    let connectedBefore = false;
    connection.on('smessage', (channel: string, message: string) => this.events.message(channel, message));
    connection.on('ready', () => {
      if (!connectedBefore) {
        connectedBefore = true;
        return;
      }
      for (const [channel, on] of this.masterOfChannel) {
        if (on === master) connection.ssubscribe!(channel).catch(() => undefined);
      }
      this.events.resumed();
    });
    // Failures surface on the commands. Kept for the connection's life: an error reply that arrives
    // after a disconnect (a refused connection) must not become an unhandled 'error' event.
    connection.on('error', () => undefined);
    this.connections.set(master, connection);
    return connection;
  }

  private refreshSlots(): void {
    if (!this.closed && this.masterOfChannel.size > 0) this.cluster.refreshSlotsCache(() => undefined);
  }

  /** After the slot map was read: channels whose slot moved follow it, and connections to nodes no longer masters are let go. */
  private readonly followSlots = (): void => {
    if (this.closed) return;
    let moved = false;
    for (const [channel, on] of this.masterOfChannel) {
      if (this.masterOf(channel) === on) continue;
      moved = true;
      this.move(channel, on);
    }
    const masters = new Set(this.cluster.nodes('master').map(nodeKey));
    for (const [master, connection] of this.connections) {
      if (masters.has(master)) continue;
      connection.disconnect();
      this.connections.delete(master);
    }
    if (moved) this.events.resumed();
  };

  /** Subscribes `channel` on its new master; on failure it stays listed on `from`, so the next slot map read tries again. */
  private move(channel: string, from: string): void {
    this.connections.get(from)?.sunsubscribe!(channel).catch(() => undefined);
    const to = this.masterOf(channel);
    const connection = to === undefined ? undefined : this.connectionTo(to);
    if (!connection) return;
    this.masterOfChannel.set(channel, to!);
    connection.ssubscribe!(channel).catch(() => {
      if (this.masterOfChannel.get(channel) === to) this.masterOfChannel.set(channel, from);
    });
  }
}

function nodeKey(node: RedisClient): string {
  const { host = '127.0.0.1', port = 6379 } = (node.options ?? {}) as { host?: string; port?: number };
  return `${host}:${port}`;
}
