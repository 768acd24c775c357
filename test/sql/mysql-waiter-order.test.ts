import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { createLockBackend, LockEngine, LockTimeoutError } from '../../lib/index.js';
import { NEXT_IN_LINE_MS } from '../../lib/backends/sql/mysql-waiting-line.js';
import { MariadbServer } from '../harness/mariadb-server.js';

// MySQL has no release notifications: waiters poll. A waiter must still get its turn by its place
// in the line, not by polling first: clients that take the lock in a tight loop (their next
// acquisition starts the moment they release, as a client back from a partition meets them) must
// not starve a waiter, nor each other.

const LEASE_MS = 2_000;
/** A waiter gets the lock after the holders ahead of it: a hold or two and a few polls, not seconds. */
const TURN_BOUND_MS = 1_000;
const SIMULTANEOUS = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',SIMULTANEOUS_ASSIGNMENT')";

let server: MariadbServer;
const pools: mysql.Pool[] = [];
beforeAll(async () => {
  server = await MariadbServer.start();
}, 60_000);
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await server?.stop();
});

/** An engine on its own pool, as another app instance; `sessionSql` runs on each of its connections. */
async function instance(options: { sessionSql?: string; url?: string; table?: string } = {}): Promise<LockEngine> {
  const pool = mysql.createPool({ uri: options.url ?? server.uri, connectionLimit: 4 });
  if (options.sessionSql) pool.on('connection', (connection) => void connection.query(options.sessionSql!));
  pools.push(pool);
  return new LockEngine(await createLockBackend({ type: 'mysql', client: pool, table: options.table }), {
    leaseMs: LEASE_MS,
  });
}

/** Takes `key` over and over (a few ms held, the next acquisition at once) until `stop`; resolves how many times. */
async function hammer(engine: LockEngine, key: string, stop: AbortSignal): Promise<number> {
  let taken = 0;
  while (!stop.aborted) {
    const lock = await engine.acquire(key, { waitMs: 30_000, signal: stop }).catch(() => undefined);
    if (!lock) break;
    taken++;
    await delay(3);
    await lock.release();
  }
  return taken;
}

describe('mysql waiters take turns', () => {
  it.each([
    ['MySQL', undefined],
    ["MariaDB's SIMULTANEOUS_ASSIGNMENT", SIMULTANEOUS],
  ])(
    'a waiter gets the lock in its turn while two clients take it in a tight loop (%s assignment order)',
    async (_order, sessionSql) => {
      const engines = await Promise.all([instance({ sessionSql }), instance({ sessionSql }), instance({ sessionSql })]);
      const key = `order:${randomUUID().slice(0, 8)}`;
      const stop = new AbortController();
      try {
        const loops = engines.slice(0, 2).map((engine) => hammer(engine, key, stop.signal));
        await delay(300);
        const waits: number[] = [];
        for (let i = 0; i < 5; i++) {
          const startedAt = performance.now();
          const lock = await engines[2].acquire(key, { waitMs: 10_000 });
          waits.push(performance.now() - startedAt);
          await lock.release();
          await delay(50);
        }
        stop.abort();
        const taken = await Promise.all(loops);
        // Each loop kept getting the lock too: the waiter competed with both throughout, and they with each other.
        expect(Math.min(...taken)).toBeGreaterThan(5);
        expect(Math.max(...waits)).toBeLessThan(TURN_BOUND_MS);
      } finally {
        stop.abort();
        await Promise.all(engines.map((engine) => engine.close()));
      }
    },
    60_000,
  );

  it('a waiter that gives up leaves its place: the key is free for the next client at once', async () => {
    const [holder, quitter, next] = await Promise.all([instance(), instance(), instance()]);
    const key = `leave:${randomUUID().slice(0, 8)}`;
    try {
      const lock = await holder.acquire(key);
      // Long enough to be the next in line, then it gives up.
      await expect(quitter.acquire(key, { waitMs: 200 })).rejects.toThrow(LockTimeoutError);
      await lock.release();
      const startedAt = performance.now();
      const taken = await next.acquire(key, { waitMs: 5_000 });
      // Its place would otherwise hold the key for NEXT_IN_LINE_MS.
      expect(performance.now() - startedAt).toBeLessThan(NEXT_IN_LINE_MS / 2);
      await taken.release();
    } finally {
      await Promise.all([holder.close(), quitter.close(), next.close()]);
    }
  }, 30_000);

  it('on a table of an earlier version that the account may not alter, locks work as before (waiters unordered)', async () => {
    const table = `old_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const user = `u${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await server.sql(`CREATE TABLE locks.${table} (key_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, lock_key VARCHAR(255) NOT NULL,
      owner VARCHAR(255) NULL, fence BIGINT UNSIGNED NOT NULL, expires_at DATETIME(3) NOT NULL, KEY ${table}_expires_at (expires_at));
      CREATE USER '${user}'@'127.0.0.1' IDENTIFIED BY 'pw'; GRANT SELECT, INSERT, UPDATE, DELETE ON locks.${table} TO '${user}'@'127.0.0.1';`);
    const url = `mysql://${user}:pw@127.0.0.1:${server.port}/locks`;
    const [a, b] = await Promise.all([instance({ url, table }), instance({ url, table })]);
    try {
      const lock = await a.acquire('old-table');
      expect(await b.tryAcquire('old-table')).toBeNull();
      const waiter = b.acquire('old-table', { waitMs: 5_000 });
      await delay(50);
      await lock.release();
      const next = await waiter;
      expect(next.fence!).toBeGreaterThan(lock.fence!);
      await next.release();
      expect(
        await server.sql(
          `SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = 'locks' AND table_name = '${table}' AND column_name = 'next_owner'`,
        ),
      ).toBe('0');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 30_000);
});
