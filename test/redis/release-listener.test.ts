import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { ReleaseWaiter } from '../../lib/backends/redis/channel-waiters.js';
import { ReleaseListener } from '../../lib/backends/redis/release-listener.js';
import { RedisServer } from '../harness/redis-server.js';

/**
 * The subscriber connection is opened on the first wait, so a later wait can send its SUBSCRIBE
 * while that connection is between `connect` and `ready`. A SUBSCRIBE in that window used to
 * collide with ioredis' ready check (INFO is refused in subscriber mode): the subscription failed
 * and the waiter slept for the holder's whole remaining lease instead of being woken.
 */
describe('redis release listener', () => {
  let server: RedisServer;
  let client: Redis;

  beforeAll(async () => {
    server = await RedisServer.start();
    client = new Redis(server.url);
  }, 30_000);

  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  /** A listener on `of`, and the subscriber connection it opens (a `duplicate()` of `of`) once it has. */
  function listenerOn(of: Redis): { listener: ReleaseListener; subscriber: () => Redis | undefined } {
    let subscriber: Redis | undefined;
    const duplicating = Object.create(of, {
      duplicate: { value: (...args: Parameters<Redis['duplicate']>) => (subscriber = of.duplicate(...args)) },
    }) as Redis;
    return { listener: new ReleaseListener(duplicating), subscriber: () => subscriber };
  }

  it("subscribes a channel whose SUBSCRIBE goes out between the connection's connect and ready events", async () => {
    const rounds = 20;
    let subscribed = 0;
    for (let round = 0; round < rounds; round++) {
      const { listener, subscriber: opened } = listenerOn(client);
      const first = listener.join(`first:${round}`, new ReleaseWaiter());
      const firstSubscribed = listener.subscribed(first, 2_000, new AbortController().signal);
      // The connection is made on the first wait, a moment after it starts.
      while (!opened()) await new Promise((resolve) => setImmediate(resolve));
      const subscriber = opened()!;
      await new Promise((resolve) => subscriber.once('connect', resolve));
      const second = listener.join(`second:${round}`, new ReleaseWaiter());
      if (await listener.subscribed(second, 2_000, new AbortController().signal)) subscribed++;
      expect(await firstSubscribed).toBe(true);
      await listener.close();
    }
    expect(subscribed).toBe(rounds);
  }, 60_000);

  it('subscribes its channels again after a reconnection, and a server that accepts the connection but never answers leaves no unhandled rejection', async () => {
    const timeoutClient = new Redis(server.url, { commandTimeout: 300 });
    const { listener, subscriber: opened } = listenerOn(timeoutClient);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const entry = listener.join(`again:${Math.random()}`, new ReleaseWaiter());
      expect(await listener.subscribed(entry, 2_000, new AbortController().signal)).toBe(true);
      const subscriber = opened()!;
      // Stopped, the server's kernel still accepts the new connection: the SUBSCRIBE sent on it times out.
      server.pause();
      subscriber.disconnect(true);
      await once(subscriber, 'ready');
      // Not subscribed until the server answers: the resubscription's timeout (300 ms) says so, and nothing is left unhandled.
      expect(await listener.subscribed(entry, 2_000, new AbortController().signal)).toBe(false);
      server.resume();
      expect(await listener.subscribed(entry, 2_000, new AbortController().signal)).toBe(true);
      const heard = new Promise<void>((resolve) => subscriber.once('message', () => resolve()));
      await client.publish(entry.channel, 'released:elsewhere');
      await heard;
      expect(unhandled).toEqual([]);
    } finally {
      server.resume();
      process.off('unhandledRejection', onUnhandled);
      await listener.close();
      timeoutClient.disconnect();
    }
  }, 30_000);
});
