import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createLockBackend, InvalidLockArgumentError, LockEngine } from '../../lib/index.js';
import type { BackendConfig } from '../../lib/backends/backend-options.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { BlackholeProxy } from '../harness/blackhole-proxy.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisServer } from '../harness/redis-server.js';

// The drift allowance on lease-based stores: a holder cut off from the store (no renewal gets
// through) is told it lost the lock at least lease x driftFactor + 2 ms before the store frees the
// key, which another client then takes. The margin is counted from the lease's local deadline (the
// lost signal less how late this loaded event loop ran its timer), so that it measures the library.

const LEASE_MS = 2_000;
/** The allowance docs/faults.md documents, as numbers: lease x driftFactor (default 0.01) + 2 ms. */
const allowanceMs = (driftFactor: number) => LEASE_MS * driftFactor + 2;

let redis: RedisServer;
let postgres: PostgresServer;
const stores = [
  {
    name: 'redis',
    port: () => redis.port,
    config: (address: string, driftFactor?: number): BackendConfig => ({
      type: 'redis',
      url: `redis://${address}`,
      driftFactor,
    }),
    /** Reads a lock's remaining lease on the server (PTTL, whole ms) over a connection opened beforehand. */
    async leaseReader() {
      const client = new Redis(redis.port, '127.0.0.1');
      await client.ping();
      return {
        remainingMs: (storeKey: string) => client.pttl(redisLockKeys(storeKey).lock),
        close: async () => void client.disconnect(),
      };
    },
  },
  {
    name: 'postgres',
    port: () => postgres.port,
    config: (address: string, driftFactor?: number): BackendConfig => ({
      type: 'postgres',
      connectionString: `postgres://postgres@${address}/postgres`,
      driftFactor,
    }),
    /** Reads a lock's remaining lease in the database (its row's expires_at by the database clock, µs) over a connection opened beforehand. */
    async leaseReader() {
      const client = new pg.Client({ connectionString: postgres.connectionString });
      await client.connect();
      const remainingMs = async (storeKey: string) =>
        Number(
          (
            await client.query(
              'SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS ms FROM distributed_locks WHERE lock_key = $1',
              [storeKey],
            )
          ).rows[0].ms,
        );
      return { remainingMs, close: () => client.end() };
    },
  },
];

beforeAll(async () => {
  [redis, postgres] = await Promise.all([RedisServer.start(), PostgresServer.start()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

describe.each(stores)('$name drift allowance', (store) => {
  /** How long before another client acquired it the cut-off holder's lease ended by its local clock. */
  async function marginMs(driftFactor: number | undefined): Promise<number> {
    const proxy = await BlackholeProxy.start(store.port());
    const holder = new LockEngine(await createLockBackend(store.config(proxy.address, driftFactor)), {
      leaseMs: LEASE_MS,
    });
    const next = new LockEngine(await createLockBackend(store.config(`127.0.0.1:${store.port()}`)), {
      leaseMs: LEASE_MS,
    });
    try {
      const key = `drift:${randomUUID().slice(0, 8)}`;
      const lock = await holder.acquire(key);
      proxy.partition();
      const deadline = once(lock.signal, 'abort').then(() => lock.expiresAt);
      const taken = await next.acquire(key, { waitMs: 4 * LEASE_MS });
      const takenAt = Date.now();
      await taken.release();
      return takenAt - (await deadline);
    } finally {
      proxy.heal();
      await Promise.all([holder.close(), next.close()]);
      await proxy.close();
    }
  }

  it('a holder cut off (driftFactor 0.1) is told it lost the lock, its lease ending >= lease x 0.1 + 2 ms (202 ms) before another client acquires it', async () => {
    expect(await marginMs(0.1)).toBeGreaterThanOrEqual(allowanceMs(0.1));
  }, 30_000);

  it("with the default driftFactor, a cut-off holder's lease ends >= lease x 0.01 + 2 ms (22 ms) before another client acquires it", async () => {
    expect(await marginMs(undefined)).toBeGreaterThanOrEqual(allowanceMs(0.01));
  }, 30_000);

  it("with the default driftFactor, a new lock's local lease ends >= lease x 0.01 + 2 ms (22 ms) before the store's lease", async () => {
    const engine = new LockEngine(await createLockBackend(store.config(`127.0.0.1:${store.port()}`)), {
      leaseMs: LEASE_MS,
      keyPrefix: 'drift:',
    });
    const reader = await store.leaseReader();
    try {
      const key = randomUUID().slice(0, 8);
      const lock = await engine.acquire(key);
      // The store read its clock after `readAt` (one round trip on an open connection): readAt + remaining is at most when its lease ends.
      const readAt = Date.now();
      const storeEndsAt = readAt + (await reader.remainingMs(`drift:${key}`));
      // 2 ms: Date.now() (here and in expiresAt) and Redis's expiry count whole ms.
      expect(storeEndsAt - lock.expiresAt).toBeGreaterThanOrEqual(allowanceMs(0.01) - 2);
      await lock.release();
    } finally {
      await Promise.all([engine.close(), reader.close()]);
    }
  });

  it('refuses a driftFactor outside [0, 1) before connecting', async () => {
    for (const driftFactor of [-0.1, 1, Number.NaN, '0.1' as unknown as number]) {
      await expect(createLockBackend(store.config('127.0.0.1:1', driftFactor))).rejects.toThrow(
        InvalidLockArgumentError,
      );
    }
  });
});

it('mysql refuses a driftFactor outside [0, 1) too', async () => {
  await expect(
    createLockBackend({ type: 'mysql', uri: 'mysql://root@127.0.0.1:1/test', driftFactor: 2 }),
  ).rejects.toThrow(/mysql backend: `driftFactor`/);
});
