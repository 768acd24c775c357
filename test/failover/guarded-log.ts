import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisServer } from '../harness/redis-server.js';

/** What the guard let in for one run: per lock key, the fences in the order the guard accepted their writes. */
export interface GuardedLogs {
  readonly logs: ReadonlyMap<string, readonly number[]>;
  /** Accepted writes whose fence is below one accepted before them on the same key: an older holder's write after a newer holder's. */
  readonly olderAfterNewer: number;
  readonly accepted: number;
}

/**
 * The guarded resource of the failover runs: a standalone Redis, apart from the deployment that
 * fails over, where each holder appends its fence to its lock key's list through
 * `RedisFenceGuard.eval` (see failover-worker.mjs). Each run gets its own key prefix.
 */
export class GuardedLog {
  private constructor(
    private readonly server: RedisServer,
    private readonly client: Redis,
  ) {}

  static async start(): Promise<GuardedLog> {
    const server = await RedisServer.start();
    return new GuardedLog(server, new Redis(server.url, { maxRetriesPerRequest: 1 }));
  }

  /** The worker config of a new run. */
  newRun(): { url: string; prefix: string } {
    return { url: this.server.url, prefix: `guarded:${randomUUID().slice(0, 8)}:` };
  }

  async read(run: { prefix: string }, keys: readonly string[]): Promise<GuardedLogs> {
    const logs = new Map<string, number[]>();
    let olderAfterNewer = 0;
    let accepted = 0;
    for (const key of keys) {
      const log = (await this.client.lrange(`${run.prefix}${key}`, 0, -1)).map(Number);
      logs.set(key, log);
      accepted += log.length;
      let highest = -Infinity;
      for (const fence of log) {
        if (fence < highest) olderAfterNewer++;
        highest = Math.max(highest, fence);
      }
    }
    return { logs, olderAfterNewer, accepted };
  }

  async stop(): Promise<void> {
    this.client.disconnect();
    await this.server.stop();
  }
}
