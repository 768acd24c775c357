import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { canDropPorts, dropPort, undropPort } from '../harness/port-drop.js';
import { RedisServer } from '../harness/redis-server.js';

// A Redis client cut off by a real partition (iptables drops its packets, so its socket goes into
// TCP retransmission back-off) acquires again within 5 s of the heal: the backend replaces a
// connection whose commands wait past their timeout. NEMESIS_LONG=1 partitions 30 s instead of 15 s
// (measured without the replacement: 12-19 s after 15 s, 22.8 s after 30 s).

const PARTITION_MS = process.env.NEMESIS_LONG === '1' ? 30_000 : 15_000;
const RECOVERY_BOUND_MS = 5_000;
const run = canDropPorts() ? it : it.skip;

let redis: RedisServer;

beforeAll(async () => {
  redis = await RedisServer.start();
}, 60_000);

afterAll(async () => {
  if (redis) undropPort(redis.port);
  await redis?.stop();
});

run(
  `acquires again within ${RECOVERY_BOUND_MS} ms of the heal of a ${PARTITION_MS / 1000} s partition, and no late acquisition stays held`,
  async () => {
    const url = `redis://127.0.0.1:${redis.port}`;
    const engine = new LockEngine(await createLockBackend({ type: 'redis', url }), { leaseMs: 60_000 });
    const other = new LockEngine(await createLockBackend({ type: 'redis', url }), { leaseMs: 60_000 });
    try {
      await (await engine.acquire('reconnect:warm')).release();
      dropPort(redis.port);
      const cutOff = await engine.acquire('reconnect:cut', { waitMs: 0 }).then(
        () => 'acquired',
        (error: Error) => error.name,
      );
      expect(cutOff).toBe('LockBackendError');
      await new Promise((resolve) => setTimeout(resolve, PARTITION_MS));
      undropPort(redis.port);
      const healedAt = performance.now();
      let recoveredMs: number | undefined;
      while (recoveredMs === undefined && performance.now() - healedAt < 60_000) {
        const lock = await engine.acquire('reconnect:after', { waitMs: 0 }).catch(() => undefined);
        if (lock) {
          recoveredMs = performance.now() - healedAt;
          await lock.release();
        }
      }
      console.log(
        `redis reconnect: acquired ${Math.round(recoveredMs ?? -1)} ms after the heal of a ${PARTITION_MS} ms partition`,
      );
      expect(recoveredMs).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
      // The acquisition made while cut off, if Redis ever ran it, was given back: the key is free.
      const taken = await other.acquire('reconnect:cut', { waitMs: 0 });
      await taken.release();
    } finally {
      undropPort(redis.port);
      await Promise.all([engine.close(), other.close()]);
    }
  },
  PARTITION_MS + 90_000,
);
