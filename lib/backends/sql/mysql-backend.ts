import { checkDriftFactor } from '../drift.js';
import { mysqlAddress, urlAddress } from '../driver-address.js';
import type { MysqlBackendOptions } from '../backend-options.js';
import { resolveIdleKeyTtlMs } from '../idle-key-ttl.js';
import type { LockBackend } from '../../engine/lock-backend.js';
import { asPromisePool, loadMysqlDriver, type MysqlPromisePool } from './mysql-driver.js';
import { MysqlDialect } from './mysql-dialect.js';
import { MysqlInspectionQueries } from './mysql-inspection.js';
import { CONNECT_TIMEOUT_MS, pickConnection, POOL_SIZE } from './sql-options.js';
import { parseTableName } from './sql-names.js';
import { SqlBackend } from './sql-backend.js';

/**
 * The `mysql` backend for MySQL 8 and MariaDB 10.11 (driver: `mysql2`). With `url` it creates a
 * pool and closes it on shutdown; a pool of yours (`client`, promise or callback style) stays open.
 * Waiters poll with jittered backoff (MySQL has no notifications). Throws InvalidLockArgumentError
 * for bad options; never connects before the first lock.
 */
export async function createMysqlBackend(options: MysqlBackendOptions): Promise<LockBackend> {
  const table = parseTableName(options.table, 'mysql');
  const idleKeyTtlMs = resolveIdleKeyTtlMs(options.idleKeyTtlMs, 'mysql');
  const driftFactor = checkDriftFactor('mysql', options.driftFactor);
  const isPool = (value: unknown): value is MysqlPromisePool => asPromisePool(value) !== undefined;
  const connection = pickConnection('mysql', options.url, options.client, isPool);
  if ('pool' in connection) {
    const pool = asPromisePool(connection.pool)!;
    return new SqlBackend(
      'mysql',
      new MysqlDialect(pool, table, false),
      idleKeyTtlMs,
      new MysqlInspectionQueries(pool, table),
      driftFactor,
      mysqlAddress(pool),
    );
  }
  const driver = await loadMysqlDriver();
  const pool = driver
    .createPool({
      uri: connection.url,
      connectionLimit: POOL_SIZE,
      maxIdle: POOL_SIZE,
      idleTimeout: 10_000,
      connectTimeout: CONNECT_TIMEOUT_MS,
      enableKeepAlive: true,
      supportBigNumbers: true,
    })
    .promise();
  return new SqlBackend(
    'mysql',
    new MysqlDialect(pool, table, true),
    idleKeyTtlMs,
    new MysqlInspectionQueries(pool, table),
    driftFactor,
    urlAddress(connection.url),
  );
}
