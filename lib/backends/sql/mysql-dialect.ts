import type { LeaseRow, SqlDialect, TakeResult } from './sql-dialect.js';
import { breakMysqlPool, MYSQL_ERROR, mysqlErrorNumber, type MysqlPromisePool, type MysqlResultHeader } from './mysql-driver.js';
import { endOrBreak } from './connection-end.js';
import { expiryIndexName, quoteTableName, type TableName } from './sql-names.js';

/** The lease table, as the backend creates it on first use (documented in docs/backends/sql.md). */
export function mysqlTableDdl(name: TableName): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteTableName(name, '`')} (
  key_hash   CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  lock_key   VARCHAR(255) NOT NULL,
  owner      VARCHAR(255) NULL,
  fence      BIGINT UNSIGNED NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  PRIMARY KEY (key_hash),
  KEY ${expiryIndexName(name)} (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
}

/** The index the idle-row sweep reads, added to a table of a version before it: online, writes go on meanwhile. */
export function mysqlIndexDdl(name: TableName): string {
  return `ALTER TABLE ${quoteTableName(name, '`')} ADD INDEX ${expiryIndexName(name)} (expires_at), ALGORITHM=INPLACE, LOCK=NONE`;
}

/** Free for the taker `?`: unowned, expired (by the database's UTC clock), or already the taker's own. */
const FREE_FOR_TAKER = 'owner <=> ? OR owner IS NULL OR expires_at <= UTC_TIMESTAMP(3)';
const LEASE_END = 'UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND';
/** The database's UTC clock in µs since 1970: a fresh row's fence, and the least fence of every acquisition (see docs/backends/sql.md, Footprint). */
const NOW_US = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))";
/**
 * InnoDB may pick a statement as a deadlock victim (many taking new rows at once, the idle-row sweep
 * deleting next to a release) and rolls it back whole: each statement here is one owner-guarded
 * autocommit change, so running it again is safe.
 */
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
  private readonly takeSql: string;
  private readonly readBackSql: string;
  private readonly renewSql: string;
  private readonly stillHeldSql: string;
  private readonly releaseSql: string;
  private readonly pruneSql: string;

  constructor(
    private readonly pool: MysqlPromisePool,
    private readonly tableName: TableName,
    private readonly ownsPool: boolean,
  ) {
    const t = quoteTableName(tableName, '`');
    // The owner goes first: with MySQL's left-to-right assignment the later guards see the new
    // owner (`owner <=> ?` true), with MariaDB's SIMULTANEOUS_ASSIGNMENT they see the old row; same outcome.
    this.takeSql = `INSERT INTO ${t} (key_hash, lock_key, owner, fence, expires_at) VALUES (?, ?, ?, ${NOW_US}, ${LEASE_END})
ON DUPLICATE KEY UPDATE
  owner = IF(${FREE_FOR_TAKER}, ?, owner),
  fence = IF(${FREE_FOR_TAKER}, GREATEST(fence + 1, ${NOW_US}), fence),
  expires_at = IF(${FREE_FOR_TAKER}, ${LEASE_END}, expires_at)`;
    this.readBackSql = `SELECT owner <=> ? AS mine, fence, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expires_at) AS ttl_us FROM ${t} WHERE key_hash = ?`;
    this.renewSql = `UPDATE ${t} SET expires_at = ${LEASE_END} WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
    this.stillHeldSql = `SELECT 1 AS held FROM ${t} WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
    this.releaseSql = `UPDATE ${t} SET owner = NULL, expires_at = UTC_TIMESTAMP(3) WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
    // Rows whose lease ended ? µs ago and whose fence the clock passed by as much, oldest first. The
    // limit is a constant of the library, written in the statement (MySQL wants LIMIT as an integer).
    this.pruneSql = `DELETE FROM ${t} WHERE expires_at < UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND AND fence < ${NOW_US} - ? ORDER BY expires_at LIMIT `;
  }

  async ensureTable(): Promise<void> {
    const { schema, table } = this.tableName;
    const [rows] = await this.pool.execute(
      `SELECT
  (SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?) AS present,
  (SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? AND index_name = ?) AS indexed`,
      [schema ?? null, table, schema ?? null, table, expiryIndexName(this.tableName)],
    );
    const found = (rows as { present: number | string; indexed: number | string }[])[0];
    if (Number(found?.present) > 0) {
      // A table of a version before the sweep: add the index online, in the background (another
      // instance doing the same fails on the duplicate name). Without it the sweep still works, reading more.
      if (Number(found?.indexed) === 0) void this.pool.execute(mysqlIndexDdl(this.tableName), []).catch(() => undefined);
      return;
    }
    // IF NOT EXISTS under the metadata lock: concurrent creators all succeed.
    await this.pool.execute(mysqlTableDdl(this.tableName), []);
  }

  async pruneIdleRows(idleKeyTtlMs: number, limit: number): Promise<number> {
    const idleUs = idleKeyTtlMs * 1000;
    const [header] = await this.pool.execute(this.pruneSql + String(Math.floor(limit)), [idleUs, idleUs]);
    return (header as MysqlResultHeader).affectedRows;
  }

  async take(row: LeaseRow, leaseMs: number): Promise<TakeResult> {
    const leaseUs = leaseMs * 1000;
    const o = row.owner;
    // Placeholders in order: the new row (4), then the owner guard + value, the fence guard, the expiry guard + lease.
    await this.change(this.takeSql, [row.keyHash, row.displayKey, o, leaseUs, o, o, o, o, leaseUs]);
    const [rows] = await this.pool.execute(this.readBackSql, [o, row.keyHash]);
    const current = (rows as TakeReadBack[])[0];
    if (!current) return { taken: false, holderTtlMs: undefined };
    const ttlMs = Math.max(0, Math.ceil(Number(current.ttl_us) / 1000));
    if (Number(current.mine) === 1 && ttlMs > 0) return { taken: true, fence: Number(current.fence) };
    return { taken: false, holderTtlMs: ttlMs };
  }

  async renew(keyHash: string, owner: string, leaseMs: number): Promise<boolean> {
    if ((await this.change(this.renewSql, [leaseMs * 1000, keyHash, owner])).affectedRows > 0) return true;
    // 0 rows can also mean "matched but unchanged" when the pool counts changed rows, not found rows.
    const [rows] = await this.pool.execute(this.stillHeldSql, [keyHash, owner]);
    return (rows as unknown[]).length > 0;
  }

  async release(keyHash: string, owner: string): Promise<boolean> {
    return (await this.change(this.releaseSql, [keyHash, owner])).affectedRows > 0;
  }

  /** Runs one change statement, again when InnoDB rolled it back as a deadlock victim. */
  private async change(sql: string, values: unknown[]): Promise<MysqlResultHeader> {
    for (let attempt = 0; ; attempt++) {
      try {
        const [header] = await this.pool.execute(sql, values);
        return header as MysqlResultHeader;
      } catch (error) {
        if (mysqlErrorNumber(error) !== MYSQL_ERROR.LOCK_DEADLOCK || attempt >= RETRIES_ON_DEADLOCK) throw error;
      }
    }
  }

  async ping(): Promise<void> {
    await this.pool.execute('SELECT 1', []);
  }

  async close(): Promise<void> {
    if (this.ownsPool) await endOrBreak(this.pool.end(), () => breakMysqlPool(this.pool));
  }
}
