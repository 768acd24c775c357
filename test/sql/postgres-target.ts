import pg from 'pg';
import { createLockBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { keyHash } from '../../lib/backends/sql/sql-keys.js';
import { freePort } from '../harness/free-port.js';
import { PostgresServer } from '../harness/postgres-server.js';
import type { SqlTarget, TestPool } from './sql-target.js';

/**
 * PostgreSQL 15 for the contract suite and the SQL scenarios. start/stop are counted, so a test
 * file that holds a start of its own keeps one server for every suite in it.
 */
export function postgresTarget(): SqlTarget {
  let users = 0;
  let server: PostgresServer;
  let admin: pg.Pool;
  const testPool = (max: number): TestPool & { raw: pg.Pool } => {
    const raw = new pg.Pool({ connectionString: server.connectionString, max });
    raw.on('error', () => undefined); // idle connections die when the server restarts
    return { raw, query: async (sql, params) => (await raw.query(sql, params)).rows, end: () => raw.end() };
  };

  return {
    name: 'postgres',
    fences: true,
    readWrite: false,
    async start() {
      if (users++ > 0) return;
      server = await PostgresServer.start();
      admin = testPool(2).raw;
    },
    async stop() {
      if (--users > 0) return;
      await admin?.end().catch(() => undefined);
      await server?.destroy();
    },
    url: () => server.connectionString,
    options: (table) => ({ type: 'postgres', url: server.connectionString, ...(table ? { table } : {}) }),
    createBackend: (): Promise<LockBackend> => createLockBackend({ type: 'postgres', url: server.connectionString }),
    taggedOptions: async (tag) => ({ type: 'postgres', url: `${server.connectionString}?application_name=${tag}` }),
    async countConnections(tag) {
      const { rows } = await admin.query(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
        [tag],
      );
      return rows[0].n;
    },
    async createBackendWithOwnPool(max, sessionSql) {
      const pool = testPool(max);
      if (sessionSql) pool.raw.on('connect', (client) => void client.query(sessionSql));
      return { backend: await createLockBackend({ type: 'postgres', client: pool.raw }), pool };
    },
    processConfig: () => ({ type: 'postgres', url: server.connectionString }),
    async expireLock(storeKey) {
      await admin.query('UPDATE distributed_locks SET owner = NULL, expires_at = now() WHERE key_hash = $1', [
        keyHash(storeKey),
      ]);
    },
    // A port that was free a moment ago: nothing listens there.
    createUnreachableBackend: async () =>
      createLockBackend({ type: 'postgres', url: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` }),
    crashFreeMs: (leaseMs) => leaseMs + 250,
    param: (n) => `$${n}`,
    query: async (sql, params) => (await admin.query(sql, params)).rows,
    quote: (table) => `"${table}"`,
    async countTables(table) {
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename = $1",
        [table],
      );
      return rows[0].n;
    },
    stopDatabase: () => server.shutdown(),
    startDatabase: () => server.launch(),
  };
}
