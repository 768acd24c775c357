import type { RedisClient } from './redis-client.js';

type Args = readonly [sha: string, numKeys: number, ...keysAndArgs: (string | number)[]];

interface Queued {
  readonly args: Args;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

interface Batch {
  queue: Queued[];
}

const batches = new WeakMap<RedisClient, Batch>();

/**
 * @internal EVALSHA through a per-client batch: the scripts issued in one tick (many callers at
 * once, a renewal tick of many leases) go out as one pipeline, one write and one round trip; a
 * lone script is sent as it is. Unlike ioredis' auto-pipelining, which waits for `setImmediate`
 * and builds a pipeline even for one command, a lone caller pays nothing. A Cluster client sends
 * each script directly (a pipeline there must stay within one slot).
 */
export function evalshaBatched(client: RedisClient, args: Args): Promise<unknown> {
  if (client.isCluster || !client.pipeline) return client.evalsha(...args);
  let batch = batches.get(client);
  if (!batch) {
    batch = { queue: [] };
    batches.set(client, batch);
  }
  const { queue } = batch;
  return new Promise((resolve, reject) => {
    queue.push({ args, resolve, reject });
    // After the current microtasks: the continuations that run now add to the same batch.
    if (queue.length === 1) process.nextTick(() => flush(client, batch));
  });
}

function flush(client: RedisClient, batch: Batch): void {
  const queued = batch.queue;
  batch.queue = [];
  if (queued.length === 1) {
    const [only] = queued as [Queued];
    client.evalsha(...only.args).then(only.resolve, only.reject);
    return;
  }
  const pipeline = client.pipeline!();
  for (const { args } of queued) pipeline.evalsha(...args);
  pipeline.exec().then(
    (results) =>
      queued.forEach(({ resolve, reject }, i) => {
        const [error, value] = results?.[i] ?? [new Error('no reply for a pipelined command'), undefined];
        if (error) reject(error);
        else resolve(value);
      }),
    (error: unknown) => queued.forEach(({ reject }) => reject(error)),
  );
}
