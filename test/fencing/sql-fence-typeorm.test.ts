import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { SqlFenceGuard, StaleFenceError, type FenceDialect } from '../../lib/index.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';

interface Database {
  dataSource: DataSource;
  stop(): Promise<void>;
}

async function postgres(): Promise<Database> {
  const server = await PostgresServer.start();
  return {
    dataSource: new DataSource({ type: 'postgres', url: server.connectionString }),
    stop: () => server.destroy(),
  };
}

async function mariadb(): Promise<Database> {
  const server = await MariadbServer.start();
  return { dataSource: new DataSource({ type: 'mysql', url: server.uri }), stop: () => server.destroy() };
}

describe.each([
  ['postgres', 'PostgreSQL', postgres],
  ['mysql', 'MariaDB', mariadb],
] as const)(
  'SqlFenceGuard (%s) through TypeORM: EntityManager.query in dataSource.transaction on %s',
  (dialect: FenceDialect, _name, start) => {
    let db: Database;
    let dataSource: DataSource;
    const guard = new SqlFenceGuard({ dialect, table: 'app_fences' });
    const p = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');

    beforeAll(async () => {
      db = await start();
      dataSource = db.dataSource;
      await dataSource.initialize();
      await guard.ensureTable((sql, params) => dataSource.query(sql, params));
      await dataSource.query('CREATE TABLE inventory (sku varchar(50) PRIMARY KEY, qty int NOT NULL)');
      await dataSource.query("INSERT INTO inventory VALUES ('apple', 10)");
    }, 60_000);

    afterAll(async () => {
      await dataSource?.destroy().catch(() => undefined);
      await db?.stop();
    }, 30_000);

    /** What an application writes: the check and the write in one TypeORM transaction. */
    const setStock = (qty: number, fence: number) =>
      dataSource.transaction(async (manager) => {
        await guard.check((sql, params) => manager.query(sql, params), 'inventory:apple', fence);
        await manager.query(`UPDATE inventory SET qty = ${p(1)} WHERE sku = ${p(2)}`, [qty, 'apple']);
      });
    const stock = async () => (await dataSource.query("SELECT qty FROM inventory WHERE sku = 'apple'"))[0].qty;

    it("accepts the current holder's writes and refuses an older one's, whose write never happens", async () => {
      await setStock(9, 100);
      await setStock(8, 100);
      await setStock(7, 101);
      const error = await setStock(1, 100).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(StaleFenceError);
      expect([(error as StaleFenceError).fence, (error as StaleFenceError).highest]).toEqual([100, 101]);
      expect(await stock()).toBe(7);
    });

    it('a transaction TypeORM rolls back takes the raised fence back too', async () => {
      await expect(
        dataSource.transaction(async (manager) => {
          await guard.check((sql, params) => manager.query(sql, params), 'inventory:apple', 200);
          await manager.query(`UPDATE inventory SET qty = 0 WHERE sku = ${p(1)}`, ['apple']);
          throw new Error('payment declined');
        }),
      ).rejects.toThrow('payment declined');
      expect(await stock()).toBe(7);
      await setStock(6, 150);
      expect(await stock()).toBe(6);
    });
  },
);
