import { describe, expect, it } from '@jest/globals';
import type { RedisClient } from '../../lib/backends/redis/redis-client.js';
import { publishingScript, pubSubKindOf } from '../../lib/backends/redis/sharded-pubsub.js';

// The detection on look-alike clients, for the answers a real deployment rarely gives here (an old
// server, an ACL, a lost connection); cluster-sharded-pubsub.test.ts runs both kinds on a real Cluster.

/** A Cluster-like client whose COMMAND INFO SPUBLISH gets `answer`; counts the questions. */
function clusterLike(answer: () => Promise<unknown>, options: object = { shardedSubscribers: false }) {
  const asked: string[][] = [];
  const client = {
    isCluster: true,
    options,
    ssubscribe: async () => 1,
    slots: [],
    nodes: () => [],
    refreshSlotsCache: () => undefined,
    call: (...args: string[]) => {
      asked.push(args);
      return answer();
    },
  } as unknown as RedisClient;
  return { client, asked };
}

const replyError = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

describe('sharded pub/sub detection', () => {
  it('stays plain, without asking, on a client that is not a Cluster', () => {
    expect(pubSubKindOf({ isCluster: false } as unknown as RedisClient)).toBe('plain');
  });

  it('goes sharded on a server that knows SPUBLISH, asking once', async () => {
    const { client, asked } = clusterLike(async () => [['spublish', 3, ['pubsub'], 1, 1, 1]]);
    expect(await pubSubKindOf(client)).toBe('sharded');
    expect(pubSubKindOf(client)).toBe('sharded');
    expect(asked).toEqual([['COMMAND', 'INFO', 'SPUBLISH']]);
  });

  it('stays plain on a server without SPUBLISH (Redis 6 answers nil)', async () => {
    const { client } = clusterLike(async () => [null]);
    expect(await pubSubKindOf(client)).toBe('plain');
    expect(pubSubKindOf(client)).toBe('plain');
  });

  it('stays plain, without asking, when the ioredis version cannot route sharded subscriptions', async () => {
    const { client, asked } = clusterLike(async () => [['spublish']], {});
    expect(await pubSubKindOf(client)).toBe('plain');
    expect(asked).toEqual([]);
  });

  it('stays plain, without asking, on a Cluster-like client without a slot map to route subscriptions by', async () => {
    const { client, asked } = clusterLike(async () => [['spublish']]);
    delete (client as { slots?: unknown }).slots;
    expect(await pubSubKindOf(client)).toBe('plain');
    expect(asked).toEqual([]);
  });

  it('stays plain, without asking, on a client with a keyPrefix (ioredis would prefix the subscribed channels, not the published ones)', async () => {
    const { client, asked } = clusterLike(async () => [['spublish']], { shardedSubscribers: false, keyPrefix: 'app:' });
    expect(await pubSubKindOf(client)).toBe('plain');
    expect(asked).toEqual([]);
  });

  it('stays plain when the server refuses the question (an ACL without COMMAND)', async () => {
    const { client, asked } = clusterLike(() =>
      Promise.reject(replyError("NOPERM this user has no permissions to run the 'command' command")),
    );
    expect(await pubSubKindOf(client)).toBe('plain');
    expect(pubSubKindOf(client)).toBe('plain');
    expect(asked).toHaveLength(1);
  });

  it('asks again after a question that got no answer', async () => {
    let answer: () => Promise<unknown> = () => Promise.reject(new Error('Connection is closed.'));
    const { client, asked } = clusterLike(() => answer());
    await expect(pubSubKindOf(client)).rejects.toThrow('Connection is closed.');
    answer = async () => [['spublish']];
    expect(await pubSubKindOf(client)).toBe('sharded');
    expect(asked).toHaveLength(2);
  });

  it('builds each script in a PUBLISH and an SPUBLISH variant', () => {
    const script = publishingScript((publish) => `return redis.call('${publish}', ARGV[1], ARGV[2])`);
    expect(script.plain.source).toContain("redis.call('PUBLISH'");
    expect(script.sharded.source).toContain("redis.call('SPUBLISH'");
    expect(script.plain.sha).not.toBe(script.sharded.sha);
  });
});
