import type { LeaseRow, SqlDialect, TakeResult } from './sql-dialect.js';
import { MYSQL_ERROR, mysqlErrorNumber, type MysqlPromisePool, type MysqlResultHeader } from './mysql-driver.js';
import { quoteTableName, type TableName } from './sql-names.js';

/** The lease table, as the backend creates it on first use (documented in docs/backends/sql.md). */
export function mysqlTableDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  key_hash   CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  lock_key   VARCHAR(255) NOT NULL,
  owner      VARCHAR(255) NULL,
  fence      BIGINT UNSIGNED NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  PRIMARY KEY (key_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
}

/** Free for the taker `?`: unowned, expired (by the database's UTC clock), or already the taker's own. */
const FREE_FOR_TAKER = 'owner <=> ? OR owner IS NULL OR expires_at <= UTC_TIMESTAMP(3)';
const LEASE_END = 'UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND';
/** InnoDB may pick an upsert as a deadlock victim when many take a new row at once: that attempt is simply busy. */
const RETRIES_ON_DEADLOCK = 3;

interface TakeReadBack {
  readonly mine: number | string;
  readonly fence: number | string;
  readonly ttl_us: number | string;
}

/**
 * MySQL 8 / MariaDB 10.11 statements. Acquire is one INSERT ... ON DUPLICATE KEY UPDATE whose
 * every assignment is guarded by the same "free for this taker" test, so the row changes
 * atomically or not at all; a read of the row then says who holds it. UTC_TIMESTAMP keeps the
 * expiry independent of session time zones and DST.
 */
export class MysqlDialect implements SqlDialect {
  private readonly table: string;
  private readonly takeSql: string;
  private readonly readBackSql: string;
  private readonly renewSql: string;
  private readonly stillHeldSql: string;
  private readonly releaseSql: string;

  constructor(
    private readonly pool: MysqlPromisePool,
    private readonly tableName: TableName,
    private readonly ownsPool: boolean,
  ) {
    const t = (this.table = quoteTableName(tableName, '`'));
    // The owner goes first: with MySQL's left-to-right assignment the later guards see the new
    // owner (`owner <=> ?` true), with MariaDB's SIMULTANEOUS_ASSIGNMENT they see the old row; same outcome.
    this.takeSql = `INSERT INTO ${t} (key_hash, lock_key, owner, fence, expires_at) VALUES (?, ?, ?, 1, ${LEASE_END})
ON DUPLICATE KEY UPDATE
  owner = IF(${FREE_FOR_TAKER}, ?, owner),
  fence = IF(${FREE_FOR_TAKER}, fence + 1, fence),
  expires_at = IF(${FREE_FOR_TAKER}, ${LEASE_END}, expires_at)`;
    this.readBackSql = `SELECT owner <=> ? AS mine, fence, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expires_at) AS ttl_us FROM ${t} WHERE key_hash = ?`;
    this.renewSql = `UPDATE ${t} SET expires_at = ${LEASE_END} WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
    this.stillHeldSql = `SELECT 1 AS held FROM ${t} WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
    this.releaseSql = `UPDATE ${t} SET owner = NULL, expires_at = UTC_TIMESTAMP(3) WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
  }

  async ensureTable(): Promise<void> {
    const [rows] = await this.pool.execute(
      'SELECT COUNT(*) AS present FROM information_schema.tables WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?',
      [this.tableName.schema ?? null, this.tableName.table],
    );
    if (Number((rows as { present: number | string }[])[0]?.present) > 0) return;
    // IF NOT EXISTS under the metadata lock: concurrent creators all succeed.
    await this.pool.execute(mysqlTableDdl(this.table), []);
  }

  async take(row: LeaseRow, leaseMs: number): Promise<TakeResult> {
    const leaseUs = leaseMs * 1000;
    const o = row.owner;
    for (let attempt = 0; ; attempt++) {
      try {
        // Placeholders in order: the new row (4), then the owner guard + value, the fence guard, the expiry guard + lease.
        await this.pool.execute(this.takeSql, [row.keyHash, row.displayKey, o, leaseUs, o, o, o, o, leaseUs]);
        break;
      } catch (error) {
        if (mysqlErrorNumber(error) !== MYSQL_ERROR.LOCK_DEADLOCK || attempt >= RETRIES_ON_DEADLOCK) throw error;
      }
    }
    const [rows] = await this.pool.execute(this.readBackSql, [o, row.keyHash]);
    const current = (rows as TakeReadBack[])[0];
    if (!current) return { taken: false, holderTtlMs: undefined };
    const ttlMs = Math.max(0, Math.ceil(Number(current.ttl_us) / 1000));
    if (Number(current.mine) === 1 && ttlMs > 0) return { taken: true, fence: Number(current.fence) };
    return { taken: false, holderTtlMs: ttlMs };
  }

  async renew(keyHash: string, owner: string, leaseMs: number): Promise<boolean> {
    const [header] = await this.pool.execute(this.renewSql, [leaseMs * 1000, keyHash, owner]);
    if ((header as MysqlResultHeader).affectedRows > 0) return true;
    // 0 rows can also mean "matched but unchanged" when the pool counts changed rows, not found rows.
    const [rows] = await this.pool.execute(this.stillHeldSql, [keyHash, owner]);
    return (rows as unknown[]).length > 0;
  }

  async release(keyHash: string, owner: string): Promise<boolean> {
    const [header] = await this.pool.execute(this.releaseSql, [keyHash, owner]);
    return (header as MysqlResultHeader).affectedRows > 0;
  }

  async ping(): Promise<void> {
    await this.pool.execute('SELECT 1', []);
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}
