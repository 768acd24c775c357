// One guarded resource as an application reaches it: a row of `fenced_values` in PostgreSQL or
// MariaDB, written in a transaction after the guard's check (through the driver, or through a
// TypeORM EntityManager), or a Redis string written by the guard's fenced SET. `lib` is the package (the built copy in a child process, the source in jest),
// so that holder A (a child) and holder B (the test) write the same way.
import mysql from 'mysql2/promise';
import pg from 'pg';
import { Redis } from 'ioredis';

/** The table of the values the guards protect (the guard keeps its fences in its own table). */
export const VALUES_TABLE = 'fenced_values';

const UPSERT = {
  postgres: `INSERT INTO ${VALUES_TABLE} (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
  mysql: `INSERT INTO ${VALUES_TABLE} (name, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)`,
};
const SELECT = {
  postgres: `SELECT value FROM ${VALUES_TABLE} WHERE name = $1`,
  mysql: `SELECT value FROM ${VALUES_TABLE} WHERE name = ?`,
};

/**
 * Opens one connection to the resource. `write(name, value, fence)` resolves once written and
 * rejects with the guard's StaleFenceError (nothing written) when `fence` is below the highest
 * accepted for `name`; `read(name)` resolves the value, or undefined.
 */
export async function openGuardedResource({ kind, url }, lib) {
  if (kind === 'redis') {
    const client = new Redis(url, { maxRetriesPerRequest: 1 });
    const guard = new lib.RedisFenceGuard(client);
    return {
      write: (name, value, fence) => guard.set(name, value, fence),
      read: async (name) => (await client.get(name)) ?? undefined,
      close: async () => void (await client.quit()),
    };
  }
  if (kind === 'typeorm-postgres') return openTypeormResource(url, lib);
  const dialect = kind === 'postgres' ? 'postgres' : 'mysql';
  const sql = dialect === 'postgres' ? await pgConnection(url) : await mysqlConnection(url);
  const guard = new lib.SqlFenceGuard({ dialect });
  return {
    async write(name, value, fence) {
      await sql.query('BEGIN');
      try {
        await guard.check(sql.query, name, fence);
        await sql.query(UPSERT[dialect], [name, value]);
        await sql.query('COMMIT');
      } catch (error) {
        await sql.query('ROLLBACK');
        throw error;
      }
    },
    read: async (name) => (await sql.rows(SELECT[dialect], [name]))[0]?.value,
    close: sql.close,
  };
}

/** PostgreSQL through TypeORM: the guard's check runs in the EntityManager's transaction, as the README shows. */
async function openTypeormResource(url, lib) {
  const { DataSource } = await import('typeorm'); // loaded only here: it takes a while
  const dataSource = await new DataSource({ type: 'postgres', url, poolSize: 1 }).initialize();
  const guard = new lib.SqlFenceGuard({ dialect: 'postgres' });
  return {
    write: (name, value, fence) =>
      dataSource.transaction(async (em) => {
        await guard.check(em.query.bind(em), name, fence);
        await em.query(UPSERT.postgres, [name, value]);
      }),
    read: async (name) => (await dataSource.query(SELECT.postgres, [name]))[0]?.value,
    close: () => dataSource.destroy(),
  };
}

/** A pg client: `query` as the guard takes it (the driver's own result), `rows` for the test's reads. */
async function pgConnection(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const query = (text, params) => client.query(text, params);
  return { query, rows: async (text, params) => (await query(text, params)).rows, close: () => client.end() };
}

/** A mysql2 connection (MySQL or MariaDB), the same way. */
async function mysqlConnection(url) {
  const connection = await mysql.createConnection(url);
  const query = (text, params) => connection.query(text, params);
  return { query, rows: async (text, params) => (await query(text, params))[0], close: () => connection.end() };
}

/** Creates the values table and the guard's fence table (idempotent). */
export async function prepareGuardedResource({ kind, url }, lib) {
  if (kind === 'redis') return;
  const dialect = kind === 'mysql' ? 'mysql' : 'postgres';
  const sql = dialect === 'postgres' ? await pgConnection(url) : await mysqlConnection(url);
  try {
    await sql.query(
      `CREATE TABLE IF NOT EXISTS ${VALUES_TABLE} (name VARCHAR(200) PRIMARY KEY, value VARCHAR(200) NOT NULL)`,
      [],
    );
    await new lib.SqlFenceGuard({ dialect }).ensureTable(sql.query);
  } finally {
    await sql.close();
  }
}
