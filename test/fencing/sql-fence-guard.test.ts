import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  fenceTableDdl,
  InvalidLockArgumentError,
  LockEngine,
  LockLostError,
  MemoryBackend,
  SqlFenceGuard,
  StaleFenceError,
  type FenceQuery,
} from '../../lib/index.js';
import { waitUntil } from '../harness/server-process.js';
import { hasSettled } from '../support/settled.js';
import { startMariadb, startPostgres, type SqlResource } from './sql-resources.js';

describe.each([
  ['PostgreSQL 15 through pg', startPostgres],
  ['MariaDB 10.11 through mysql2', startMariadb],
])('SqlFenceGuard on %s', (_name, start) => {
  let db: SqlResource;
  let guard: SqlFenceGuard;
  const p = (n: number) => db.param(n);

  beforeAll(async () => {
    db = await start();
    guard = new SqlFenceGuard({ dialect: db.dialect });
    await guard.ensureTable((sql, params) => db.rows(sql, params));
    await db.rows('CREATE TABLE stock (resource varchar(255) PRIMARY KEY, qty int NOT NULL)');
  }, 60_000);

  afterAll(async () => {
    await db?.stop();
  }, 30_000);

  /** The guarded write: check, then set the stock, in one transaction. */
  const write = (resource: string, fence: Parameters<SqlFenceGuard['check']>[2], qty: number) =>
    db.transaction(async (query) => {
      await guard.check(query, resource, fence);
      await query(`INSERT INTO stock (resource, qty) VALUES (${p(1)}, ${p(2)}) ${upsertQty(db)}`, [resource, qty]);
    });
  const qtyOf = async (resource: string) =>
    (await db.rows(`SELECT qty FROM stock WHERE resource = ${p(1)}`, [resource]))[0]?.qty;
  const highestOf = async (resource: string) => {
    const rows = await db.rows(`SELECT highest FROM fenced_resources WHERE resource = ${p(1)}`, [resource]);
    return rows.length === 0 ? undefined : Number(rows[0].highest);
  };
  const staleError = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(StaleFenceError);
    return error as StaleFenceError;
  };

  it('ensureTable is idempotent (again, twice at once, and by four instances creating a new table at once) and creates the floor row; fenceTableDdl gives its statements', async () => {
    const ran: string[] = [];
    const query: FenceQuery = (sql, params) => (ran.push(sql), db.rows(sql, params));
    await guard.ensureTable(query);
    await Promise.all([guard.ensureTable(query), guard.ensureTable(query)]);
    expect(ran.slice(0, 2)).toEqual(fenceTableDdl(db.dialect));
    expect(await highestOf('')).toBe(0);
    // Instances starting together, each on its own connection, on a table nobody created yet.
    await Promise.all(
      Array.from({ length: 4 }, () =>
        new SqlFenceGuard({ dialect: db.dialect, table: 'created_at_once' }).ensureTable((sql, params) =>
          db.rows(sql, params),
        ),
      ),
    );
    expect(await db.rows(`SELECT highest FROM created_at_once WHERE resource = ''`)).toHaveLength(1);
  });

  it('accepts a higher fence and an equal one (one holder writing twice), and stores the highest', async () => {
    await write('stock:a', 10, 1);
    await write('stock:a', 10, 2);
    await write('stock:a', 12, 3);
    expect(await qtyOf('stock:a')).toBe(3);
    expect(await highestOf('stock:a')).toBe(12);
  });

  it('refuses a lower fence with StaleFenceError (resource, fence, highest) and nothing is written', async () => {
    const error = await staleError(write('stock:a', 11, 99));
    expect([error.name, error.resource, error.fence, error.highest]).toEqual(['StaleFenceError', 'stock:a', 11, 12]);
    expect(error.message).toMatch(/"stock:a".*11.*12/);
    expect(await qtyOf('stock:a')).toBe(3);
    expect(await highestOf('stock:a')).toBe(12);
  });

  it('keeps clock-floored fences (16-digit µs) exact', async () => {
    const fence = 1_764_201_234_567_891;
    await write('stock:clock', fence, 1);
    expect(await highestOf('stock:clock')).toBe(fence);
    expect((await staleError(write('stock:clock', fence - 1, 2))).highest).toBe(fence);
  });

  it('a rolled-back transaction takes its raised fence back with its write', async () => {
    await expect(
      db.transaction(async (query) => {
        await guard.check(query, 'stock:a', 20);
        await query(`UPDATE stock SET qty = 50 WHERE resource = ${p(1)}`, ['stock:a']);
        throw new Error('the write failed later');
      }),
    ).rejects.toThrow('the write failed later');
    expect(await highestOf('stock:a')).toBe(12);
    await write('stock:a', 15, 4);
    expect(await qtyOf('stock:a')).toBe(4);
  });

  it('serialises two transactions on one resource: the lower fence, checked second, waits and is refused', async () => {
    const first = await db.begin();
    await guard.check(first.query, 'stock:b', 30);
    const second = await db.begin();
    const late = guard.check(second.query, 'stock:b', 25);
    await waitUntil(
      "the second check to wait for the first transaction's row lock",
      async () => (await db.lockWaits()) >= 1,
    );
    expect(await hasSettled(late)).toBe(false);
    await first.commit();
    const error = await staleError(late);
    expect([error.fence, error.highest]).toEqual([25, 30]);
    await second.rollback();
    expect(await highestOf('stock:b')).toBe(30);
  });

  it('serialises two transactions on one resource: the higher fence, checked second, waits and is accepted; after a rollback, so is a lower one', async () => {
    const first = await db.begin();
    await guard.check(first.query, 'stock:c', 40);
    const second = await db.begin();
    const next = guard.check(second.query, 'stock:c', 45);
    await waitUntil('the second check to wait', async () => (await db.lockWaits()) >= 1);
    expect(await hasSettled(next)).toBe(false);
    await first.commit();
    await next;
    await second.commit();
    expect(await highestOf('stock:c')).toBe(45);

    const raised = await db.begin();
    await guard.check(raised.query, 'stock:c', 50);
    const other = await db.begin();
    const lower = guard.check(other.query, 'stock:c', 48);
    await waitUntil('the lower check to wait', async () => (await db.lockWaits()) >= 1);
    await raised.rollback();
    await lower;
    await other.commit();
    expect(await highestOf('stock:c')).toBe(48);
  });

  it('refuses bad options, resources and fences with InvalidLockArgumentError before any statement', async () => {
    for (const table of ['bad-name', 'a.b.c', 'x; DROP TABLE stock', '', 'a'.repeat(64), 42]) {
      expect(() => new SqlFenceGuard({ dialect: db.dialect, table: table as string })).toThrow(
        InvalidLockArgumentError,
      );
      expect(() => fenceTableDdl(db.dialect, table as string)).toThrow(InvalidLockArgumentError);
    }
    expect(() => new SqlFenceGuard({ dialect: 'sqlite' as 'mysql' })).toThrow(/dialect/);
    let statements = 0;
    const counting: FenceQuery = async () => void statements++;
    for (const resource of ['', 'é'.repeat(128), undefined]) {
      await expect(guard.check(counting, resource as string, 1)).rejects.toThrow(InvalidLockArgumentError);
    }
    for (const fence of [-1, 2.5, undefined, Number.NaN]) {
      await expect(guard.check(counting, 'stock:a', fence as number)).rejects.toThrow(InvalidLockArgumentError);
    }
    await expect(guard.prune(counting, { olderThanMs: 0 })).rejects.toThrow(InvalidLockArgumentError);
    expect(statements).toBe(0);
  });

  it('accepts a resource name of 255 UTF-8 bytes and a schema-qualified table name', async () => {
    const long = 'é'.repeat(127) + 'x';
    await write(long, 1, 1);
    expect(await highestOf(long)).toBe(1);
    const schema = db.dialect === 'postgres' ? 'public' : 'locks';
    const qualified = new SqlFenceGuard({ dialect: db.dialect, table: `${schema}.other_fences` });
    await qualified.ensureTable((sql, params) => db.rows(sql, params));
    await db.transaction((query) => qualified.check(query, 'x', 7));
    expect((await db.rows('SELECT highest FROM other_fences WHERE resource = ' + p(1), ['x']))[0].highest).toEqual(
      db.dialect === 'postgres' ? '7' : 7,
    );
  });

  it('prune deletes idle rows but keeps refusing their older fences through the floor', async () => {
    // A table of its own: its floor must not meet the other tests' small fences.
    const guard = new SqlFenceGuard({ dialect: db.dialect, table: 'pruned_fences' });
    await guard.ensureTable((sql, params) => db.rows(sql, params));
    const write = (resource: string, fence: number, qty: number) =>
      db.transaction(async (query) => {
        await guard.check(query, resource, fence);
        await query(`INSERT INTO stock (resource, qty) VALUES (${p(1)}, ${p(2)}) ${upsertQty(db)}`, [resource, qty]);
      });
    const highestOf = async (resource: string) => {
      const rows = await db.rows(`SELECT highest FROM pruned_fences WHERE resource = ${p(1)}`, [resource]);
      return rows.length === 0 ? undefined : Number(rows[0].highest);
    };
    await write('prune:old-1', 100, 1);
    await write('prune:old-2', 200, 1);
    await write('prune:fresh', 300, 1);
    await write('prune:low', 50, 1);
    // Make two rows idle for two hours, in the database's own clock terms.
    const idle = db.dialect === 'postgres' ? "touched_at - interval '2 hours'" : 'touched_at - INTERVAL 2 HOUR';
    await db.rows(`UPDATE pruned_fences SET touched_at = ${idle} WHERE resource IN (${p(1)}, ${p(2)})`, [
      'prune:old-1',
      'prune:old-2',
    ]);

    await db.transaction((query) => guard.prune(query, { olderThanMs: 3_600_000 }));
    expect(await highestOf('prune:old-1')).toBeUndefined();
    expect(await highestOf('prune:old-2')).toBeUndefined();
    expect(await highestOf('prune:fresh')).toBe(300);
    expect(await highestOf('')).toBeGreaterThanOrEqual(200);

    // A stale holder of a pruned resource is still refused; the floor covers every row.
    expect((await staleError(write('prune:old-1', 150, 9))).highest).toBe(200);
    expect((await staleError(write('prune:never-seen', 199, 9))).highest).toBe(200);
    expect((await staleError(write('prune:low', 60, 9))).highest).toBe(200);
    expect((await staleError(write('prune:fresh', 250, 9))).highest).toBe(300);
    expect(await qtyOf('prune:old-1')).toBe(1);
    await write('prune:old-1', 200, 2);
    await write('prune:old-2', 201, 2);
    expect(await qtyOf('prune:old-2')).toBe(2);

    // Outside a transaction too, and again: nothing idle, nothing lowered.
    await guard.prune((sql, params) => db.rows(sql, params), { olderThanMs: 3_600_000 });
    expect(await highestOf('prune:old-1')).toBe(200);
    expect(await highestOf('')).toBeGreaterThanOrEqual(200);
  });

  it('a prune and a check of a row it deletes go one after the other: the stale fence never gets in', async () => {
    const guard = new SqlFenceGuard({ dialect: db.dialect, table: 'raced_fences' });
    await guard.ensureTable((sql, params) => db.rows(sql, params));
    const idle = db.dialect === 'postgres' ? "touched_at - interval '2 hours'" : 'touched_at - INTERVAL 2 HOUR';
    const makeIdle = (resource: string) =>
      db.rows(`UPDATE raced_fences SET touched_at = ${idle} WHERE resource = ${p(1)}`, [resource]);
    const count = async (resource: string) =>
      (await db.rows(`SELECT resource FROM raced_fences WHERE resource = ${p(1)}`, [resource])).length;
    await db.transaction((query) => guard.check(query, 'race:a', 500));
    await makeIdle('race:a');

    // The prune first: its transaction holds the raised floor; a stale check of the deleted row waits for it, then meets the floor.
    const pruning = await db.begin();
    await guard.prune(pruning.query, { olderThanMs: 3_600_000 });
    const late = db.transaction((query) => guard.check(query, 'race:a', 450));
    await waitUntil('the check to wait for the prune', async () => (await db.lockWaits()) >= 1);
    expect(await hasSettled(late)).toBe(false);
    await pruning.commit();
    expect((await staleError(late)).highest).toBe(500);
    expect(await count('race:a')).toBe(0);

    // The check first: a prune waits for the check's transaction, and leaves its fresh row alone.
    await db.transaction((query) => guard.check(query, 'race:b', 600));
    await makeIdle('race:b');
    const checking = await db.begin();
    await guard.check(checking.query, 'race:c', 700);
    const prune = db.transaction((query) => guard.prune(query, { olderThanMs: 3_600_000 }));
    await waitUntil('the prune to wait for the check', async () => (await db.lockWaits()) >= 1);
    expect(await hasSettled(prune)).toBe(false);
    await checking.commit();
    await prune;
    expect([await count('race:b'), await count('race:c')]).toEqual([0, 1]);
    expect((await staleError(db.transaction((query) => guard.check(query, 'race:b', 599)))).highest).toBe(600);
  });

  it('takes a memory-backend Lock: accepts the holder, refuses the released one (LockLostError) and its fence once a newer holder wrote', async () => {
    const engine = new LockEngine(new MemoryBackend());
    try {
      const first = await engine.acquire('stock:lock');
      await write('stock:lock', first, 1);
      await first.release();
      await expect(write('stock:lock', first, 2)).rejects.toBeInstanceOf(LockLostError);
      const second = await engine.acquire('stock:lock');
      await write('stock:lock', second, 3);
      expect(await highestOf('stock:lock')).toBe(second.fence);
      expect((await staleError(write('stock:lock', first.fence!, 4))).highest).toBe(second.fence);
      await second.release();
      expect(await qtyOf('stock:lock')).toBe(3);
    } finally {
      await engine.close();
    }
  });
});

function upsertQty(db: SqlResource): string {
  return db.dialect === 'postgres'
    ? 'ON CONFLICT (resource) DO UPDATE SET qty = EXCLUDED.qty'
    : 'ON DUPLICATE KEY UPDATE qty = VALUES(qty)';
}
