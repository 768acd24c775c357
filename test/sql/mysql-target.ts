import mysql from 'mysql2/promise';
import { createLockBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { keyHash } from '../../lib/backends/sql/sql-keys.js';
import { freePort } from '../harness/free-port.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import type { SqlTarget, TestPool } from './sql-target.js';

/**
 * MariaDB 10.11 for the contract suite and the SQL scenarios. start/stop are counted, so a test
 * file that holds a start of its own keeps one server for every suite in it.
 */
export function mysqlTarget(): SqlTarget {
  let users = 0;
  let server: MariadbServer;
  let admin: TestPool;
  const testPool = (max: number): TestPool & { raw: mysql.Pool } => {
    const raw = mysql.createPool({ uri: server.uri, connectionLimit: max });
    return {
      raw,
      query: async (sql, params) => (await raw.query(sql, params))[0] as Record<string, unknown>[],
      end: () => raw.end(),
    };
  };

  return {
    name: 'mysql',
    fences: true,
    readWrite: false,
    async start() {
      if (users++ > 0) return;
      server = await MariadbServer.start();
      admin = testPool(2);
    },
    async stop() {
      if (--users > 0) return;
      await admin?.end().catch(() => undefined);
      await server?.destroy();
    },
    url: () => server.uri,
    options: (table) => ({ type: 'mysql', url: server.uri, ...(table ? { table } : {}) }),
    createBackend: (): Promise<LockBackend> => createLockBackend({ type: 'mysql', url: server.uri }),
    // One account per tag: MariaDB lists connections by user.
    async taggedOptions(tag) {
      await server.sql(
        `CREATE USER '${tag}'@'127.0.0.1' IDENTIFIED BY 'pw'; GRANT ALL ON locks.* TO '${tag}'@'127.0.0.1';`,
      );
      return { type: 'mysql', url: `mysql://${tag}:pw@127.0.0.1:${server.port}/locks` };
    },
    async countConnections(tag) {
      return Number(await server.sql(`SELECT COUNT(*) FROM information_schema.processlist WHERE user = '${tag}'`));
    },
    async createBackendWithOwnPool(max, sessionSql) {
      const pool = testPool(max);
      if (sessionSql) pool.raw.on('connection', (connection) => connection.query(sessionSql));
      return { backend: await createLockBackend({ type: 'mysql', client: pool.raw }), pool };
    },
    processConfig: () => ({ type: 'mysql', url: server.uri }),
    async expireLock(storeKey) {
      await admin.query('UPDATE distributed_locks SET owner = NULL, expires_at = UTC_TIMESTAMP(3) WHERE key_hash = ?', [
        keyHash(storeKey),
      ]);
    },
    // A port that was free a moment ago: nothing listens there.
    createUnreachableBackend: async () =>
      createLockBackend({ type: 'mysql', url: `mysql://ndl:x@127.0.0.1:${await freePort()}/locks` }),
    crashFreeMs: (leaseMs) => leaseMs + 250,
    param: () => '?',
    query: (sql, params) => admin.query(sql, params),
    quote: (table) => `\`${table}\``,
    async countTables(table) {
      const rows = await admin.query(
        'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?',
        [table],
      );
      return Number(rows[0].n);
    },
    stopDatabase: () => server.shutdown(),
    startDatabase: () => server.launch(),
  };
}
