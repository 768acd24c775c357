import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createLockBackend, InvalidLockArgumentError, LockEngine } from '../../lib/index.js';
import type { BackendConfig } from '../../lib/backends/backend-options.js';
import { driftMs } from '../../lib/backends/drift.js';
import { BlackholeProxy } from '../harness/blackhole-proxy.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisServer } from '../harness/redis-server.js';

// The drift allowance on lease-based stores: a holder cut off from the store (no renewal gets
// through) is told it lost the lock at least lease x driftFactor + 2 ms before the store frees the
// key, which another client then takes.

const LEASE_MS = 2_000;
const DRIFT_FACTOR = 0.1;
/** The lost signal's timer may fire this late on a loaded machine, eating into the measured margin. */
const TIMER_SLACK_MS = 40;

let redis: RedisServer;
let postgres: PostgresServer;
const stores = [
  { name: 'redis', port: () => redis.port, config: (address: string, driftFactor?: number): BackendConfig => ({ type: 'redis', url: `redis://${address}`, driftFactor }) },
  {
    name: 'postgres',
    port: () => postgres.port,
    config: (address: string, driftFactor?: number): BackendConfig => ({ type: 'postgres', connectionString: `postgres://postgres@${address}/postgres`, driftFactor }),
  },
];

beforeAll(async () => {
  [redis, postgres] = await Promise.all([RedisServer.start(), PostgresServer.start()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

describe.each(stores)('$name drift allowance', (store) => {
  it('a holder cut off is told it lost the lock at least the drift allowance before another client acquires it', async () => {
    const proxy = await BlackholeProxy.start(store.port());
    const holder = new LockEngine(await createLockBackend(store.config(proxy.address, DRIFT_FACTOR)), { leaseMs: LEASE_MS });
    const next = new LockEngine(await createLockBackend(store.config(`127.0.0.1:${store.port()}`)), { leaseMs: LEASE_MS });
    try {
      const key = `drift:${randomUUID().slice(0, 8)}`;
      const lock = await holder.acquire(key);
      proxy.partition();
      const lost = once(lock.signal, 'abort').then(() => performance.now());
      const acquiredAt = next.acquire(key, { waitMs: 4 * LEASE_MS }).then((taken) => [performance.now(), taken] as const);
      const lostAt = await lost;
      const [takenAt, taken] = await acquiredAt;
      const marginMs = takenAt - lostAt;
      expect(marginMs).toBeGreaterThanOrEqual(driftMs(LEASE_MS, DRIFT_FACTOR) - TIMER_SLACK_MS);
      await taken.release();
    } finally {
      proxy.heal();
      await Promise.all([holder.close(), next.close()]);
      await proxy.close();
    }
  }, 30_000);

  it('refuses a driftFactor outside [0, 1) before connecting', async () => {
    for (const driftFactor of [-0.1, 1, Number.NaN, '0.1' as unknown as number]) {
      await expect(createLockBackend(store.config('127.0.0.1:1', driftFactor))).rejects.toThrow(InvalidLockArgumentError);
    }
  });
});

it('mysql refuses a driftFactor outside [0, 1) too', async () => {
  await expect(createLockBackend({ type: 'mysql', uri: 'mysql://root@127.0.0.1:1/test', driftFactor: 2 })).rejects.toThrow(/mysql backend: `driftFactor`/);
});
