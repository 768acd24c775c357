import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { runCounterExperiment } from '../support/counter-harness.js';
import { RedisServer } from '../harness/redis-server.js';

describe('redis backend: 4 OS processes x 8 workers on one key', () => {
  let server: RedisServer;
  let redis: Redis;
  const PROCESSES = 4;
  const WORKERS = 8;
  const ITERATIONS = 25;

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
  }, 30_000);

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('loses no update of a non-atomic counter, and fences order the holds in time without overlap', async () => {
    const { holds, total, final } = await runCounterExperiment({
      processes: PROCESSES,
      workers: WORKERS,
      iterations: ITERATIONS,
      backend: { type: 'redis', url: server.url },
      counter: { store: 'redis', url: server.url, key: 'hammer-counter' },
      key: 'hammer',
      keyPrefix: 'mp:',
      leaseMs: 10_000,
      waitMs: 120_000,
      pauseMs: [0, 2],
      readFinal: async () => Number(await redis.get('hammer-counter')),
    });
    expect(total).toBe(PROCESSES * WORKERS * ITERATIONS);
    expect(final).toBe(total);

    expect(holds).toHaveLength(total);
    expect(new Set(holds.map((hold) => hold.fence)).size).toBe(total);
    expect(new Set(holds.map((hold) => hold.pid)).size).toBe(PROCESSES);
    const timed = holds
      .map((hold) => ({ fence: hold.fence!, start: hold.start!, end: hold.end!, pid: hold.pid }))
      .sort((x, y) => x.fence - y.fence);
    const overlaps = timed.filter((hold, i) => hold.end < hold.start || (i > 0 && hold.start < timed[i - 1].end));
    expect(overlaps).toEqual([]);
    // Hand-offs between processes really happened (not one process after the other).
    const crossProcess = timed.filter((hold, i) => i > 0 && hold.pid !== timed[i - 1].pid).length;
    expect(crossProcess).toBeGreaterThan(PROCESSES);
  }, 120_000);
});
