import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { InvalidLockArgumentError, LockEngine, createLockBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { displayKey, keyHash } from '../../lib/backends/sql/sql-keys.js';
import type { SqlBackend } from '../../lib/backends/sql/sql-backend.js';
import { waitUntil } from '../harness/server-process.js';
import type { SqlTarget } from './sql-target.js';

/** Pairs that a case-insensitive, space-padding or normalising key column would wrongly take for one key. */
const LOOK_ALIKES: [string, string][] = [
  ['a', 'A'],
  ['key', 'key '],
  ['caf\u00e9', 'cafe\u0301'],
  ['\ud800', '\udc00'],
  ["it's", "it\\'s"],
];

const HOSTILE_KEYS: [string, string][] = [
  ['quotes', `'"\`'; DROP TABLE distributed_locks; --`],
  ['backslashes', '\\\\x\\0\\n\\'],
  ['newlines and tabs', 'line 1\nline 2\r\n\tend'],
  ['NUL and control characters', 'nul\u0000bell\u0007del\u007f'],
  ['LIKE wildcards', '%_%*?[]'],
  ['unicode', 'ключ-🔒-键-ä-\u{1F600}'],
  ['10 KB', 'k'.repeat(10_240)],
  ['64 KiB (the longest key)', 'x'.repeat(65_536)],
];

/** What only SQL stores must show, beyond the contract suite: rows, keys, table creation, pools. */
export function describeSqlScenarios(target: SqlTarget): void {
  describe(`${target.name} lease table`, () => {
    const keyPrefix = `sql:${randomUUID().slice(0, 8)}:`;
    const engines: LockEngine[] = [];
    const newEngine = async (backend?: LockBackend) => {
      const engine = new LockEngine(backend ?? (await target.createBackend()), {
        keyPrefix,
        leaseMs: 10_000,
        waitMs: 5_000,
      });
      engines.push(engine);
      return engine;
    };
    const row = async (key: string, table = 'distributed_locks') =>
      (
        await target.query(
          `SELECT lock_key, owner, fence FROM ${target.quote(table)} WHERE key_hash = ${target.param(1)}`,
          [keyHash(keyPrefix + key)],
        )
      )[0];

    afterAll(async () => {
      await Promise.allSettled(engines.map((engine) => engine.close()));
    });

    it(`refuses mode 'read' with InvalidLockArgumentError naming the ${target.name} backend`, async () => {
      const engine = await newEngine();
      const error = await engine.acquire('read-mode', { mode: 'read' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidLockArgumentError);
      expect((error as Error).message).toContain(`mode 'read' is not supported by the ${target.name} backend`);
      await (await engine.acquire('read-mode', { mode: 'write', waitMs: 0 })).release();
    });

    it('keeps the row on release (until the key is idle), and fences follow the database clock in µs', async () => {
      const engine = await newEngine();
      const before = Date.now() * 1000;
      const first = await engine.acquire('kept-row');
      await first.release();
      // The database runs on this machine: its clock and ours agree within a second.
      expect(Math.abs(first.fence! - before)).toBeLessThan(1_000_000);
      const released = await row('kept-row');
      expect(released).toMatchObject({ lock_key: keyPrefix + 'kept-row', owner: null });
      expect(Number(released.fence)).toBe(first.fence);
      const second = await engine.acquire('kept-row');
      expect(second.fence).toBeGreaterThan(first.fence!);
      expect((await row('kept-row')).owner).not.toBeNull();
      await second.release();
      const rows = await target.query(
        `SELECT count(*) AS n FROM distributed_locks WHERE key_hash = ${target.param(1)}`,
        [keyHash(keyPrefix + 'kept-row')],
      );
      expect(Number(rows[0].n)).toBe(1);
    });

    it.each(HOSTILE_KEYS)(
      'stores a key with %s safely: it locks, excludes, frees and reads back',
      async (_name, key) => {
        const [a, b] = [await newEngine(), await newEngine()];
        const held = await a.acquire(key);
        expect(await b.tryAcquire(key)).toBeNull();
        const stored = await row(key);
        expect(stored.lock_key).toBe(displayKey(keyPrefix + key));
        await held.release();
        const next = await b.acquire(key, { waitMs: 0 });
        expect(next.fence).toBeGreaterThan(held.fence!);
        await next.release();
        expect(await target.countTables('distributed_locks')).toBe(1);
      },
    );

    it.each(LOOK_ALIKES)(
      'keeps look-alike keys %j and %j apart (no collation, padding or normalisation)',
      async (one, other) => {
        const engine = await newEngine();
        const first = await engine.acquire(one);
        const second = await engine.acquire(other, { waitMs: 0 });
        await Promise.all([first.release(), second.release()]);
      },
    );

    it('creates the table exactly once when 6 instances use it for the first time at the same moment', async () => {
      const table = `locks_race_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      expect(await target.countTables(table)).toBe(0);
      const racers = await Promise.all(
        Array.from({ length: 6 }, async () => newEngine(await createLockBackend(target.options(table)))),
      );
      const results = await Promise.allSettled(racers.map((engine) => engine.tryAcquire('first-use')));
      expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
      const locks = results
        .map((result) => (result as PromiseFulfilledResult<unknown>).value)
        .filter((lock) => lock !== null);
      expect(locks).toHaveLength(1);
      expect(await target.countTables(table)).toBe(1);
      expect(await row('first-use', table)).toMatchObject({ fence: expect.anything() });
    });

    it('works on a schema-qualified table name', async () => {
      const schema = target.name === 'postgres' ? 'public' : 'locks';
      const table = `locks_qualified_${randomUUID().replaceAll('-', '').slice(0, 8)}`;
      const engine = await newEngine(await createLockBackend(target.options(`${schema}.${table}`)));
      const lock = await engine.acquire('qualified');
      expect(await target.countTables(table)).toBe(1);
      await lock.release();
    });

    it('answers ping() while the database is up', async () => {
      const backend = await target.createBackend();
      await expect(backend.ping!()).resolves.toBeUndefined();
      await backend.close();
    });

    it('closes the connections it created (pool and listener) when the engine closes', async () => {
      const tag = `ndl_close_${randomUUID().replaceAll('-', '').slice(0, 8)}`;
      const engine = new LockEngine(await createLockBackend(await target.taggedOptions(tag)), {
        keyPrefix,
        leaseMs: 5_000,
      });
      const held = await engine.acquire('closing');
      const waiter = engine.acquire('closing', { waitMs: 5_000 }); // on postgres, this opens the listening connection
      await new Promise((resolve) => setTimeout(resolve, 200));
      await held.release();
      await (await waiter).release();
      expect(await target.countConnections(tag)).toBeGreaterThan(0);
      await engine.close();
      await waitUntil('the connections to close', async () => (await target.countConnections(tag)) === 0, 5_000);
    });

    if (target.name === 'postgres') {
      it.each(['its own pool', 'a pool of yours'])(
        'wakes waiters with LISTEN/NOTIFY on release (backend with %s)',
        async (kind) => {
          const owned = kind === 'a pool of yours' ? await target.createBackendWithOwnPool(2) : undefined;
          const backend = (owned?.backend ?? (await target.createBackend())) as SqlBackend;
          const notifier = backend.dialect.notifier!;
          const k = `notify-${kind.length}`;
          let woken = 0;
          const leave = notifier.subscribe(keyHash(keyPrefix + k), () => woken++);
          await waitUntil('the listening connection', () => notifier.isListening(), 5_000);
          const engine = await newEngine();
          await (await engine.acquire(k)).release();
          await waitUntil('the release notification', () => woken === 1, 5_000);
          leave(false);
          await backend.close();
          await owned?.pool.end();
        },
      );
    }

    if (target.name === 'mysql') {
      it("takes, excludes and fences the same with MariaDB's SIMULTANEOUS_ASSIGNMENT sql_mode (UPDATE sees only old values)", async () => {
        const { backend, pool } = await target.createBackendWithOwnPool(
          2,
          "SET SESSION sql_mode = CONCAT(@@sql_mode, ',SIMULTANEOUS_ASSIGNMENT')",
        );
        expect(String((await pool.query('SELECT @@SESSION.sql_mode AS mode'))[0].mode)).toContain(
          'SIMULTANEOUS_ASSIGNMENT',
        );
        const [simultaneous, usual] = [await newEngine(backend), await newEngine()];
        const fences: number[] = [];
        for (let i = 0; i < 4; i++) {
          const [holder, other] = i % 2 ? [usual, simultaneous] : [simultaneous, usual];
          const lock = await holder.acquire('simultaneous', { waitMs: 0 });
          expect(await other.tryAcquire('simultaneous')).toBeNull();
          expect(await holder.tryAcquire('simultaneous')).toBeNull();
          fences.push(lock.fence!);
          await lock.release();
        }
        for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
        await simultaneous.close();
        await pool.end();
      });
    }

    it('holds no connection while a lock is held: a pool of 1 serves the holder, a waiter and the app, and stays open after close', async () => {
      const { backend, pool } = await target.createBackendWithOwnPool(1);
      const engine = new LockEngine(backend, { keyPrefix, leaseMs: 900, waitMs: 10_000 });
      const held = await engine.acquire('pool-of-one');
      const waiter = engine.acquire('pool-of-one');
      // The app's own queries still get the only connection, across several renewals (every 300 ms).
      for (let i = 0; i < 4; i++) {
        expect(await pool.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(held.signal.aborted).toBe(false);
      await held.release();
      await (await waiter).release();
      await engine.close();
      expect(await pool.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
      await pool.end();
    }, 20_000);
  });
}
