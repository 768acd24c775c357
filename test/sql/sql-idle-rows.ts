import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { keyHash } from '../../lib/backends/sql/sql-keys.js';
import { expiryIndexName, parseTableName } from '../../lib/backends/sql/sql-names.js';
import type { SqlBackend } from '../../lib/backends/sql/sql-backend.js';
import { waitUntil } from '../harness/server-process.js';
import type { SqlTarget } from './sql-target.js';

/** Short, so that rows become idle within the test; leases are longer than it on purpose. */
const IDLE_MS = 200;

/** Rows of idle keys go, fences stay strictly increasing, held and too-new rows stay. */
export function describeSqlIdleRows(target: SqlTarget): void {
  describe(`${target.name}: rows of idle keys are deleted, fences keep increasing`, () => {
    const table = `idle_rows_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const keyPrefix = 'idle:';
    const engines: LockEngine[] = [];
    const p = (n: number) => target.param(n);
    const newEngine = async (idleKeyTtlMs = IDLE_MS, tableName = table) => {
      const backend = await createLockBackend({ ...target.options(tableName), idleKeyTtlMs } as never);
      const engine = new LockEngine(backend, { keyPrefix, leaseMs: 600, waitMs: 0 });
      engines.push(engine);
      return { engine, backend: backend as SqlBackend };
    };
    const row = async (key: string) =>
      (
        await target.query(`SELECT owner, fence FROM ${target.quote(table)} WHERE key_hash = ${p(1)}`, [
          keyHash(keyPrefix + key),
        ])
      )[0];
    /** The database clock in µs since 1970, as the backend reads it. */
    const dbMicros = async () => {
      const sql =
        target.name === 'postgres'
          ? 'SELECT (extract(epoch FROM now()) * 1000000)::bigint AS us'
          : "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) AS us";
      return Number((await target.query(sql))[0].us);
    };
    const hasExpiryIndex = async (tableName: string) => {
      const index = expiryIndexName(parseTableName(tableName, target.name));
      const sql =
        target.name === 'postgres'
          ? `SELECT count(*) AS n FROM pg_indexes WHERE tablename = ${p(1)} AND indexname = ${p(2)}`
          : `SELECT COUNT(*) AS n FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ${p(1)} AND index_name = ${p(2)}`;
      return Number((await target.query(sql, [tableName, index]))[0].n) > 0;
    };
    /** Runs the sweep until it deletes nothing more (as its timer would, without waiting for it). */
    const sweepAll = async (backend: SqlBackend) => {
      while ((await backend.sweeper.sweep()) > 0);
    };

    afterAll(async () => {
      await Promise.allSettled(engines.map((engine) => engine.close()));
    });

    it('deletes the row of a key idle for longer than idleKeyTtlMs; locked again, the key gets a larger fence', async () => {
      const { engine, backend } = await newEngine();
      const first = await engine.acquire('gone');
      await first.release();
      const releasedAt = await dbMicros();
      await backend.sweeper.sweep();
      expect(await row('gone')).toBeDefined(); // released just now: not idle yet
      await waitUntil(
        'the key to be idle',
        async () => (await dbMicros()) > releasedAt + (IDLE_MS + 50) * 1000,
        5_000,
        10,
      );
      await sweepAll(backend);
      expect(await row('gone')).toBeUndefined();
      const second = await engine.acquire('gone');
      expect(second.fence!).toBeGreaterThan(first.fence!);
      await second.release();
    });

    it('keeps the row of a lock held (and renewed) for longer than idleKeyTtlMs', async () => {
      const { engine, backend } = await newEngine();
      const held = await engine.acquire('held', { leaseMs: 1_000 });
      // Twice lease + idle: a row whose lease were not renewed would be swept within that.
      const until = Date.now() + 2 * (1_000 + IDLE_MS);
      while (Date.now() < until) {
        await backend.sweeper.sweep();
        expect(await row('held')).toBeDefined();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(held.signal.aborted).toBe(false);
      expect(Number((await row('held')).fence)).toBe(held.fence);
      await held.release();
    });

    it('keeps a row whose fence is ahead of the database clock until the clock has passed it by idleKeyTtlMs', async () => {
      const { engine, backend } = await newEngine();
      const first = await engine.acquire('ahead');
      await first.release();
      const ahead = (await dbMicros()) + 1_000_000;
      await target.query(`UPDATE ${target.quote(table)} SET fence = ${p(1)} WHERE key_hash = ${p(2)}`, [
        ahead,
        keyHash(keyPrefix + 'ahead'),
      ]);
      await waitUntil(
        'the lease to be idle',
        async () => (await dbMicros()) > first.fence! + (IDLE_MS + 50) * 1000,
        5_000,
        10,
      );
      await sweepAll(backend);
      expect(Number((await row('ahead')).fence)).toBe(ahead);
      await waitUntil(
        'the clock to pass the fence by the idle time',
        async () => (await dbMicros()) > ahead + (IDLE_MS + 50) * 1000,
        5_000,
        10,
      );
      await sweepAll(backend);
      expect(await row('ahead')).toBeUndefined();
      const next = await engine.acquire('ahead');
      expect(next.fence!).toBeGreaterThan(ahead);
      await next.release();
    });

    it('deletes at most `limit` rows per statement', async () => {
      // A table of its own, swept by no timer (a day's idleKeyTtlMs): only the statements below delete.
      const batchTable = `idle_batch_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      const { engine, backend } = await newEngine(86_400_000, batchTable);
      // 30 new rows at once: on a loaded machine one upsert may outlast the 600 ms lease (and be taken again).
      await Promise.all(
        Array.from({ length: 30 }, async (_, i) =>
          (await engine.acquire(`batch:${i}`, { leaseMs: 5_000, waitMs: 10_000 })).release(),
        ),
      );
      const releasedAt = await dbMicros();
      const batchRows = async () =>
        Number((await target.query(`SELECT count(*) AS n FROM ${target.quote(batchTable)}`))[0].n);
      expect(await batchRows()).toBe(30);
      await waitUntil(
        'the keys to be idle',
        async () => (await dbMicros()) > releasedAt + (IDLE_MS + 50) * 1000,
        5_000,
        10,
      );
      expect(await backend.dialect.pruneIdleRows(IDLE_MS, 7)).toBe(7);
      expect(await backend.dialect.pruneIdleRows(IDLE_MS, 7)).toBe(7);
      expect(await batchRows()).toBe(16);
      expect(await backend.dialect.pruneIdleRows(IDLE_MS, 1_000)).toBe(16);
      expect(await batchRows()).toBe(0);
    });

    it('creates the expiry index with a new table, and adds it to a table of an earlier version (without it) on first use', async () => {
      await newEngine()
        .then(({ engine }) => engine.acquire('indexed'))
        .then((lock) => lock.release());
      expect(await hasExpiryIndex(table)).toBe(true);
      const old = `idle_old_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      const columns =
        target.name === 'postgres'
          ? 'key_hash char(64) NOT NULL PRIMARY KEY, lock_key varchar(255) NOT NULL, owner varchar(255), fence bigint NOT NULL, expires_at timestamptz NOT NULL'
          : 'key_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, lock_key VARCHAR(255) NOT NULL, owner VARCHAR(255) NULL, fence BIGINT UNSIGNED NOT NULL, expires_at DATETIME(3) NOT NULL';
      await target.query(`CREATE TABLE ${target.quote(old)} (${columns})`);
      // A row of the earlier version: fence 7, counted from 1.
      await target.query(
        `INSERT INTO ${target.quote(old)} (key_hash, lock_key, owner, fence, expires_at) VALUES (${p(1)}, 'k', NULL, 7, ${target.name === 'postgres' ? 'now()' : 'UTC_TIMESTAMP(3)'})`,
        [keyHash(keyPrefix + 'legacy')],
      );
      expect(await hasExpiryIndex(old)).toBe(false);
      const { engine } = await newEngine(IDLE_MS, old);
      const lock = await engine.acquire('legacy');
      expect(lock.fence!).toBeGreaterThan(7);
      await lock.release();
      await waitUntil('the index to be added in the background', () => hasExpiryIndex(old), 10_000);
    });
  });
}
