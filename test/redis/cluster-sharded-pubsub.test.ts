import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { subscribe as subscribeToChannel, unsubscribe as unsubscribeFromChannel } from 'node:diagnostics_channel';
import { createConnection, createServer, type Socket } from 'node:net';
import { createLockBackend, LockEngine, LockLostError } from '../../lib/index.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { releaseLockHeard } from '../../lib/backends/redis/release.js';
import { redisSemaphoreKeys } from '../../lib/backends/redis/semaphore-keys.js';
import { keySlot } from '../../lib/backends/redis/key-slot.js';
import { pubSubKindOf } from '../../lib/backends/redis/sharded-pubsub.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { waitUntil } from '../harness/server-process.js';
import { asleepOn, forcePubSubKind } from '../support/internal-seams.js';

/** What a node did about release messages: PUBLISH / SPUBLISH it ran, and messages the cluster bus brought it. */
interface NodeCounts {
  readonly publish: number;
  readonly spublish: number;
  readonly busPublish: number;
  readonly busShardPublish: number;
}

/**
 * A TCP proxy to one node that, once `armed`, answers a client that closes its connection with one
 * last error reply (as a server whose reply crossed the client's close), then closes too.
 */
async function lateReplyProxy(targetPort: number): Promise<{
  port: number;
  arm(reply: string): void;
  readonly lateReplies: number;
  close(): Promise<void>;
}> {
  let armedWith: string | undefined;
  let lateReplies = 0;
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const reply = armedWith;
    const upstream = createConnection({ port: targetPort, host: '127.0.0.1' });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream, { end: false });
    upstream.pipe(client, { end: false });
    client.on('end', () => {
      upstream.end();
      if (reply !== undefined) lateReplies++;
      if (reply === undefined) client.end();
      else client.end(reply);
    });
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    arm: (reply) => void (armedWith = reply),
    get lateReplies() {
      return lateReplies;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** How long waiters wait: longer than any wake-up takes, shorter than the holders' leases (60 s). */
const WAIT_MS = 30_000;
/** A waiter not woken by then was not woken by the release message. */
const WOKEN_WITHIN_MS = 10_000;

describe('redis backend on a 3-master Redis Cluster: releases on sharded pub/sub', () => {
  let cluster: RedisCluster;
  const clients: Cluster[] = [];
  const engines: LockEngine[] = [];
  /** One store key per master, each in a slot that master serves. */
  const keyOnMaster = new Map<number, string>();

  async function clusterClient(kind?: 'plain'): Promise<Cluster> {
    const client = new Cluster(cluster.startupNodes, { enableAutoPipelining: true });
    clients.push(client);
    if (kind) forcePubSubKind(client, kind);
    await new Promise((resolve, reject) => {
      client.once('ready', resolve);
      client.once('error', reject);
    });
    return client;
  }

  async function engineOn(client: Cluster): Promise<LockEngine> {
    const engine = new LockEngine(await createLockBackend({ type: 'redis', client }), {
      leaseMs: 5_000,
      waitMs: 10_000,
    });
    engines.push(engine);
    return engine;
  }

  const channelOf = (key: string) => redisLockKeys(`lock:${key}`).channel;
  const asleep = (engine: LockEngine, key: string) => asleepOn(engine.backend, `lock:${key}`);
  const numberAfter = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);

  async function counts(port: number): Promise<NodeCounts> {
    const [stats, bus] = [await cluster.cli(port, 'INFO', 'commandstats'), await cluster.cli(port, 'CLUSTER', 'INFO')];
    return {
      publish: numberAfter(stats, /cmdstat_publish:calls=(\d+)/),
      spublish: numberAfter(stats, /cmdstat_spublish:calls=(\d+)/),
      // CLUSTER INFO lists a message type once one was seen.
      busPublish: numberAfter(bus, /cluster_stats_messages_publish_received:(\d+)/),
      busShardPublish: numberAfter(bus, /cluster_stats_messages_publishshard_received:(\d+)/),
    };
  }

  /** What each node did about release messages during `work` on a key of `master`'s. */
  async function countsDuring(master: number, work: () => Promise<void>): Promise<Map<number, NodeCounts>> {
    // Messages of earlier tests still on their way would land in this count.
    for (const port of cluster.ports) await relayedSoFar(port);
    const before = await Promise.all(cluster.ports.map(counts));
    await work();
    await relayedSoFar(master);
    const after = await Promise.all(cluster.ports.map(counts));
    return new Map(
      cluster.ports.map((port, i) => {
        const [was, now] = [before[i], after[i]];
        // Less the marker relayedSoFar published.
        const marker = port === master ? { publish: 1, bus: 0 } : { publish: 0, bus: 1 };
        return [
          port,
          {
            publish: now.publish - was.publish - marker.publish,
            spublish: now.spublish - was.spublish,
            busPublish: now.busPublish - was.busPublish - marker.bus,
            busShardPublish: now.busShardPublish - was.busShardPublish,
          },
        ];
      }),
    );
  }

  /**
   * Returns once every other node has what `master` relayed to it so far: a marker PUBLISHed on
   * `master` reached a subscriber on each of them (the cluster bus delivers one node's messages in order).
   */
  async function relayedSoFar(master: number): Promise<void> {
    const channel = `marker:${randomUUID()}`;
    const listeners = cluster.ports
      .filter((port) => port !== master)
      .map((port) => new Redis({ port, host: '127.0.0.1' }));
    try {
      await Promise.all(listeners.map((listener) => listener.subscribe(channel)));
      const heard = Promise.all(
        listeners.map((listener) => new Promise((resolve) => listener.once('message', resolve))),
      );
      await cluster.cli(master, 'PUBLISH', channel, 'marker');
      await heard;
    } finally {
      for (const listener of listeners) listener.disconnect();
    }
  }

  /** How many subscribers `port` has for `channel`: plain (PUBSUB NUMSUB) and sharded (PUBSUB SHARDNUMSUB). */
  async function subscribers(port: number, channel: string): Promise<{ plain: number; sharded: number }> {
    const last = (reply: string) => Number(reply.split('\n').at(-1));
    return {
      plain: last(await cluster.cli(port, 'PUBSUB', 'NUMSUB', channel)),
      sharded: last(await cluster.cli(port, 'PUBSUB', 'SHARDNUMSUB', channel)),
    };
  }

  /**
   * What a waiter (waiting WAIT_MS, for a holder with a longer lease) got once a release should have
   * woken it: unwoken, it would try again only when its wait ends, and `woken` rejects long before.
   */
  async function woken<T>(acquisition: Promise<T>, withinMs = WOKEN_WITHIN_MS): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const notWoken = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not woken within ${withinMs} ms`)), withinMs);
    });
    try {
      return await Promise.race([acquisition, notWoken]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A holder with a 60 s lease releases while `waiter` waits for the key: only the release message can wake it in time. */
  async function wokenByRelease(
    holder: LockEngine,
    waiter: LockEngine,
    key: string,
    onceAsleep: () => Promise<void> = async () => undefined,
  ): Promise<void> {
    const held = await holder.acquire(key, { leaseMs: 60_000 });
    const waiting = waiter.acquire(key, { waitMs: WAIT_MS });
    await waitUntil('the waiter asleep', () => asleep(waiter, key) === 1, 5_000, 5);
    await onceAsleep();
    await held.release();
    const next = await woken(waiting);
    expect(next.fence!).toBeGreaterThan(held.fence!);
    await next.release();
  }

  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    const client = await clusterClient();
    const run = randomUUID().slice(0, 8);
    for (let n = 0; keyOnMaster.size < cluster.ports.length; n++) {
      const key = `shard-${run}-${n}`;
      const slot = Number(await client.call('CLUSTER', 'KEYSLOT', channelOf(key)));
      const { master } = await cluster.slotNodes(slot, cluster.ports[0]);
      if (!keyOnMaster.has(master)) keyOnMaster.set(master, key);
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    await Promise.allSettled(clients.map((client) => client.quit()));
    await cluster?.stop();
  }, 30_000);

  it("computes a channel's slot as the Cluster does (CLUSTER KEYSLOT), hash tags included", async () => {
    const keys = [
      ...[...keyOnMaster.values()].flatMap((key) => [channelOf(key), redisSemaphoreKeys(`lock:${key}`).channel]),
      'foo',
      'foo{}{bar}',
      'foo{{bar}}zap',
      '{}foo',
      'a{b}c{d}',
      'ключ-{锁}',
      `no-tag-${randomUUID()}`,
    ];
    for (const key of keys) {
      expect(keySlot(key)).toBe(Number(await cluster.cli(cluster.ports[0], 'CLUSTER', 'KEYSLOT', key)));
    }
  });

  it('finds sharded pub/sub on a Redis 7 Cluster, and keeps plain pub/sub when told to', async () => {
    expect(await pubSubKindOf(await clusterClient())).toBe('sharded');
    expect(await pubSubKindOf(await clusterClient('plain'))).toBe('plain');
  });

  it('wakes waiters on keys of every shard through sharded subscriptions on that shard', async () => {
    const [a, b] = [await engineOn(await clusterClient()), await engineOn(await clusterClient())];
    for (const [master, key] of keyOnMaster) {
      await wokenByRelease(a, b, key, async () => {
        expect(await subscribers(master, channelOf(key))).toEqual({ plain: 0, sharded: 1 });
        for (const port of cluster.ports) expect((await subscribers(port, channelOf(key))).plain).toBe(0);
      });
    }
  }, 90_000);

  it("announces a release on the key's shard only: the other nodes see no publish, run or relayed", async () => {
    const [engine, other] = [await engineOn(await clusterClient()), await engineOn(await clusterClient())];
    const releases = 20;
    for (const [master, key] of keyOnMaster) {
      const seen = await countsDuring(master, async () => {
        for (let i = 0; i < releases; i++) {
          const held = await engine.acquire(key);
          // Refused: the key is flagged as waited for, so its release is announced.
          expect(await other.tryAcquire(key)).toBeNull();
          await held.release();
        }
      });
      expect(seen.get(master)).toMatchObject({ spublish: releases, publish: 0 });
      for (const port of cluster.ports.filter((port) => port !== master)) {
        expect(seen.get(port)).toEqual({ publish: 0, spublish: 0, busPublish: 0, busShardPublish: 0 });
      }
    }
  }, 60_000);

  it("wakes waiters through every announcing script on the Cluster: force release, a reader's release, a semaphore release, a queue leave", async () => {
    const [a, b, c] = [
      await engineOn(await clusterClient()),
      await engineOn(await clusterClient()),
      await engineOn(await clusterClient()),
    ];
    for (const [master, key] of keyOnMaster) {
      const forced = await a.acquire(key, { leaseMs: 60_000 });
      const waiting = b.acquire(key, { waitMs: WAIT_MS });
      await waitUntil('the waiter asleep', () => asleep(b, key) === 1, 5_000, 5);
      expect(await c.forceRelease(key)).toBe(true);
      await (await woken(waiting)).release();
      await forced.release().catch(() => undefined);

      const reader = await a.acquire(key, { mode: 'read', leaseMs: 60_000 });
      const writer = b.acquire(key, { mode: 'write', waitMs: WAIT_MS });
      await waitUntil('the writer asleep', () => asleep(b, key) === 1, 5_000, 5);
      await reader.release();
      await (await woken(writer)).release();

      const permit = await a.acquire(key, { permits: 1, leaseMs: 60_000 });
      const next = b.acquire(key, { permits: 1, waitMs: WAIT_MS });
      const semaphoreChannel = redisSemaphoreKeys(`lock:${key}`).channel;
      await waitUntil(
        'the permit waiter subscribed',
        async () => (await subscribers(master, semaphoreChannel)).sharded === 1,
        5_000,
        5,
      );
      await permit.release();
      await (await woken(next)).release();

      // The first queued leaves (its wait ends) while another queues behind it: LEAVE announces it,
      // as do the two releases that follow.
      const spublishedBefore = (await counts(master)).spublish;
      const holder = await a.acquire(key, { leaseMs: 60_000 });
      const giveUp = new AbortController();
      const leaving = b
        .acquire(key, { fair: true, waitMs: WAIT_MS, signal: giveUp.signal })
        .catch((error: unknown) => error);
      await waitUntil('the first fair waiter asleep', () => asleep(b, key) === 1, 5_000, 5);
      const behind = c.acquire(key, { fair: true, waitMs: WAIT_MS });
      await waitUntil('the second fair waiter asleep', () => asleep(c, key) === 1, 5_000, 5);
      giveUp.abort();
      expect(await leaving).toBeDefined();
      await waitUntil(
        'the first place given up',
        async () => Number(await cluster.cli(master, 'ZCARD', redisLockKeys(`lock:${key}`).queue)) === 1,
        5_000,
        5,
      );
      await holder.release();
      await (await woken(behind)).release();
      // LEAVE and the holder's release (its waiters flagged the key); the last release, with nobody waiting, is not announced.
      expect((await counts(master)).spublish - spublishedBefore).toBe(2);
    }
  }, 120_000);

  it("counts the subscribers that heard a release: one per waiting backend, on the key's shard", async () => {
    const client = await clusterClient();
    const waiters = [await engineOn(await clusterClient()), await engineOn(await clusterClient())];
    const key = keyOnMaster.values().next().value!;
    const keys = redisLockKeys(`lock:${key}`);
    await client.set(keys.lock, 'probe', 'PX', 60_000);
    const waiting = waiters.map((engine) => engine.acquire(key, { waitMs: WAIT_MS }));
    await waitUntil('both waiters asleep', () => waiters.every((engine) => asleep(engine, key) === 1), 5_000, 5);
    expect(await releaseLockHeard(client, keys, 'probe')).toBe(2);
    // One of them gets the lock at once, the other once that one releases it.
    const first = await woken(Promise.race(waiting));
    await first.release();
    for (const lock of await Promise.all(waiting)) if (lock !== first) await lock.release();
  }, 30_000);

  it("wakes a sleeping waiter when its sharded subscriber's connection drops, since a release may have gone unheard", async () => {
    const [holder, waiter] = [await engineOn(await clusterClient()), await engineOn(await clusterClient())];
    const [master, key] = [...keyOnMaster][1];
    const held = await holder.acquire(key, { leaseMs: 60_000 });
    const waiting = waiter.acquire(key, { waitMs: WAIT_MS });
    await waitUntil('the waiter asleep', () => asleep(waiter, key) === 1, 5_000, 5);
    // The key freed with no message (as if announced while the subscriber was away), then the subscriber cut.
    // (ioredis then keeps a 2 s timer to close the dead socket, so jest may note that it did not exit at once.)
    await cluster.cli(master, 'DEL', redisLockKeys(`lock:${key}`).lock);
    expect(Number(await cluster.cli(master, 'CLIENT', 'KILL', 'TYPE', 'pubsub'))).toBeGreaterThan(0);
    const next = await woken(waiting);
    expect(next.fence!).toBeGreaterThan(held.fence!);
    await next.release();
    await expect(held.release()).rejects.toThrow(LockLostError);
  }, 60_000);

  it('stays on PUBLISH / SUBSCRIBE for a Cluster client with a keyPrefix, and wakes its waiters', async () => {
    const prefixed = async () => {
      const client = new Cluster(cluster.startupNodes, { keyPrefix: 'app:' });
      clients.push(client);
      await new Promise((resolve, reject) => client.once('ready', resolve).once('error', reject));
      return client;
    };
    const [first, second] = [await prefixed(), await prefixed()];
    expect(await pubSubKindOf(first)).toBe('plain');
    const [a, b] = [await engineOn(first), await engineOn(second)];
    for (const key of keyOnMaster.values()) await wokenByRelease(a, b, key);
  }, 90_000);

  it('falls back to PUBLISH / SUBSCRIBE when sharded pub/sub is not there: waiters still woken, every node relayed the release', async () => {
    const [a, b] = [await engineOn(await clusterClient('plain')), await engineOn(await clusterClient('plain'))];
    for (const [master, key] of keyOnMaster) {
      const seen = await countsDuring(master, () =>
        wokenByRelease(a, b, key, async () => {
          const onEveryNode = await Promise.all(cluster.ports.map((port) => subscribers(port, channelOf(key))));
          expect(onEveryNode.reduce((sum, { plain }) => sum + plain, 0)).toBe(1);
          expect(onEveryNode.every(({ sharded }) => sharded === 0)).toBe(true);
        }),
      );
      // One release announced: the holder's (its waiter flagged the key); the woken waiter's, with nobody waiting, is not.
      expect(seen.get(master)).toMatchObject({ publish: 1, spublish: 0 });
      for (const port of cluster.ports.filter((port) => port !== master)) expect(seen.get(port)!.busPublish).toBe(1);
    }
  }, 90_000);

  it('follows a slot moved to another master while a waiter sleeps: the release on the new master still wakes it', async () => {
    const [holder, waiter] = [await engineOn(await clusterClient()), await engineOn(await clusterClient())];
    const [from, to] = cluster.ports as [number, number, number];
    let key = '';
    let slot = -1;
    for (let n = 0; slot < 0; n++) {
      const candidate = `moving-${randomUUID().slice(0, 8)}-${n}`;
      const candidateSlot = Number(await cluster.cli(from, 'CLUSTER', 'KEYSLOT', channelOf(candidate)));
      if ((await cluster.slotNodes(candidateSlot, from)).master === from) [key, slot] = [candidate, candidateSlot];
    }
    const held = await holder.acquire(key, { leaseMs: 60_000 });
    // Waits longer than the subscriber takes to see the move (it re-reads the slot map every 5 s).
    const waiting = waiter.acquire(key, { waitMs: 45_000 });
    await waitUntil('the waiter asleep', () => asleep(waiter, key) === 1, 5_000, 5);
    expect((await subscribers(from, channelOf(key))).sharded).toBe(1);

    const [fromId, toId] = [await cluster.cli(from, 'CLUSTER', 'MYID'), await cluster.cli(to, 'CLUSTER', 'MYID')];
    await cluster.cli(to, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', fromId);
    await cluster.cli(from, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', toId);
    const keys = (await cluster.cli(from, 'CLUSTER', 'GETKEYSINSLOT', String(slot), '100')).split('\n').filter(Boolean);
    await cluster.cli(from, 'MIGRATE', '127.0.0.1', String(to), '', '0', '5000', 'KEYS', ...keys);
    for (const port of cluster.ports) await cluster.cli(port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', toId);
    await waitUntil(
      'every node sees the slot moved',
      async () => {
        const seen = await Promise.all(cluster.ports.map((port) => cluster.slotNodes(slot, port)));
        return seen.every(({ master }) => master === to);
      },
      10_000,
      50,
    );

    await held.release();
    const next = await woken(waiting, 25_000);
    expect(next.fence!).toBeGreaterThan(held.fence!);
    await next.release();
    // Later waits subscribe on the new master.
    await wokenByRelease(holder, waiter, key, async () =>
      expect((await subscribers(to, channelOf(key))).sharded).toBe(1),
    );
  }, 90_000);
  it('keeps listening to a subscriber connection it closed: an error reply that crosses the close is not an unhandled error', async () => {
    const [master, key] = [...keyOnMaster][0];
    const proxy = await lateReplyProxy(master);
    const subscriberSockets: Socket[] = [];
    const onSocket = ({ socket }: { socket: Socket }) => void subscriberSockets.push(socket);
    try {
      const client = new Cluster(cluster.startupNodes, {
        natMap: { [`127.0.0.1:${master}`]: { host: '127.0.0.1', port: proxy.port } },
      });
      clients.push(client);
      await new Promise((resolve, reject) => client.once('ready', resolve).once('error', reject));
      const [holder, waiter] = [await engineOn(await clusterClient()), await engineOn(client)];
      const held = await holder.acquire(key, { leaseMs: 60_000 });
      // The waiter's own connection to the master is open before the proxy is armed: only the subscriber's gets the late reply.
      expect(await waiter.tryAcquire(key)).toBeNull();
      proxy.arm('-ERR max number of clients reached\r\n');
      subscribeToChannel('net.client.socket', onSocket as (message: unknown) => void);
      const giveUp = new AbortController();
      const waiting = waiter.acquire(key, { waitMs: WAIT_MS, signal: giveUp.signal }).catch((error: unknown) => error);
      await waitUntil(
        'the waiter subscribed',
        async () => (await subscribers(master, channelOf(key))).sharded === 1,
        5_000,
        5,
      );
      giveUp.abort();
      expect(await waiting).toMatchObject({ name: 'AbortError' });
      // Nothing left to answer on the subscriber's connection: the late reply answers no command.
      await waitUntil(
        'the waiter unsubscribed',
        async () => (await subscribers(master, channelOf(key))).sharded === 0,
        5_000,
        5,
      );
      // The subscriber's connection (with ioredis' `shardedSubscribers`, also its Cluster's own).
      const closed = subscriberSockets
        .filter((socket) => socket.remotePort === proxy.port)
        .map((socket) => new Promise((resolve) => socket.once('close', resolve)));
      expect(closed.length).toBeGreaterThan(0);
      await waiter.close();
      // A socket closes once the reply and the end behind it were read: an unhandled 'error' would have been thrown by then.
      await Promise.all(closed);
      expect(proxy.lateReplies).toBe(closed.length);
      await held.release();
    } finally {
      unsubscribeFromChannel('net.client.socket', onSocket as (message: unknown) => void);
      await proxy.close();
    }
  }, 30_000);
});
