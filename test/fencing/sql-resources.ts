import mysql from 'mysql2/promise';
import pg from 'pg';
import type { FenceDialect, FenceQuery } from '../../lib/index.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';

/** A real database a fence table lives in, reached the way an application would: pg or mysql2. */
export interface SqlResource {
  readonly dialect: FenceDialect;
  /** Runs `work` in a transaction on a connection of its own; commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (query: FenceQuery) => Promise<T>): Promise<T>;
  /** A transaction left open: the test commits or rolls it back. */
  begin(): Promise<{ query: FenceQuery; commit(): Promise<void>; rollback(): Promise<void> }>;
  /** One autocommit statement; resolves the rows. */
  rows(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** How many sessions wait for a row lock now. */
  lockWaits(): Promise<number>;
  /** `$n` or `?`. */
  param(n: number): string;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<SqlResource> {
  const server = await PostgresServer.start();
  const pool = new pg.Pool({ connectionString: server.connectionString, max: 8 });
  pool.on('error', () => undefined); // idle connections end when the server stops
  const begin = async () => {
    const client = await pool.connect();
    await client.query('BEGIN');
    const end = async (sql: string) => {
      try {
        await client.query(sql);
      } finally {
        client.release();
      }
    };
    return {
      query: (sql: string, params: unknown[]) => client.query(sql, params),
      commit: () => end('COMMIT'),
      rollback: () => end('ROLLBACK'),
    };
  };
  return {
    dialect: 'postgres',
    begin,
    transaction: (work) => inTransaction(begin, work),
    rows: async (sql, params = []) => (await pool.query(sql, params)).rows,
    lockWaits: async () =>
      Number((await pool.query("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'")).rows[0].n),
    param: (n) => `$${n}`,
    async stop() {
      await pool.end().catch(() => undefined);
      await server.destroy();
    },
  };
}

export async function startMariadb(): Promise<SqlResource> {
  const server = await MariadbServer.start();
  const pool = mysql.createPool({ uri: server.uri, connectionLimit: 8 });
  const begin = async () => {
    const connection = await pool.getConnection();
    await connection.beginTransaction();
    const end = async (action: () => Promise<void>) => {
      try {
        await action();
      } finally {
        connection.release();
      }
    };
    return {
      query: (sql: string, params: unknown[]) => connection.query(sql, params),
      commit: () => end(() => connection.commit()),
      rollback: () => end(() => connection.rollback()),
    };
  };
  return {
    dialect: 'mysql',
    begin,
    transaction: (work) => inTransaction(begin, work),
    rows: async (sql, params = []) => (await pool.query(sql, params))[0] as Record<string, unknown>[],
    // As root: INNODB_TRX needs the PROCESS privilege.
    lockWaits: async () =>
      Number(await server.sql("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'")),
    param: () => '?',
    async stop() {
      await pool.end().catch(() => undefined);
      await server.destroy();
    },
  };
}

async function inTransaction<T>(begin: SqlResource['begin'], work: (query: FenceQuery) => Promise<T>): Promise<T> {
  const tx = await begin();
  let result: T;
  try {
    result = await work(tx.query);
  } catch (error) {
    await tx.rollback();
    throw error;
  }
  await tx.commit();
  return result;
}
