import type { LeaseRow, SqlDialect, TakeResult, WaitPlace } from './sql-dialect.js';
import {
  breakMysqlPool,
  MYSQL_ERROR,
  mysqlErrorNumber,
  type MysqlPromisePool,
  type MysqlResultHeader,
} from './mysql-driver.js';
import { endOrBreak } from './connection-end.js';
import { expiryIndexName, quoteTableName, type TableName } from './sql-names.js';
import { named, type NamedStatement } from './named-params.js';
import { CLOCK_STEP_US, NOW_US } from './mysql-clock.js';
import {
  FREE_IN_TURN,
  LINE_COLUMNS,
  LINE_READ_BACK,
  MysqlWaitingLine,
  type LineReadBack,
} from './mysql-waiting-line.js';

/** The lease table, as the backend creates it on first use (documented in docs/backends/sql.md). */
export function mysqlTableDdl(name: TableName): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteTableName(name, '`')} (
  key_hash   CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  lock_key   VARCHAR(255) NOT NULL,
  owner      VARCHAR(255) NULL,
  fence      BIGINT UNSIGNED NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  ${LINE_COLUMNS.join(',\n  ')},
  PRIMARY KEY (key_hash),
  KEY ${expiryIndexName(name)} (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
}

/** The index the idle-row sweep reads, added to a table of a version before it: online, writes go on meanwhile. */
function mysqlIndexDdl(name: TableName): string {
  return `ALTER TABLE ${quoteTableName(name, '`')} ADD INDEX ${expiryIndexName(name)} (expires_at), ALGORITHM=INPLACE, LOCK=NONE`;
}

/** The columns of the waiting line, added to a table of a version before it: instantly, without copying the table. */
function mysqlLineDdl(name: TableName): string {
  return `ALTER TABLE ${quoteTableName(name, '`')} ${LINE_COLUMNS.map((column) => `ADD COLUMN ${column}`).join(', ')}, ALGORITHM=INSTANT`;
}

/** Free for the taker: unowned, expired (by the database's UTC clock), or already the taker's own (tables without the waiting line). */
const FREE_FOR_TAKER = 'owner <=> :owner OR owner IS NULL OR expires_at <= UTC_TIMESTAMP(3)';
const LEASE_END = 'UTC_TIMESTAMP(3) + INTERVAL :leaseUs MICROSECOND';
/**
 * InnoDB may pick a statement as a deadlock victim (many taking new rows at once, the idle-row sweep
 * deleting next to a release) and rolls it back whole: each statement here is one owner-guarded
 * autocommit change, so running it again is safe.
 */
const RETRIES_ON_DEADLOCK = 3;
/** MySQL's error for a column added twice (another instance added the waiting line a moment earlier). */
const DUPLICATE_COLUMN = 1060;

type TakeParams = 'key' | 'display' | 'owner' | 'leaseUs';

interface TakeReadBack extends Partial<LineReadBack> {
  readonly mine: number | string;
  readonly fence: number | string;
  readonly ttl_us: number | string;
}

/** The statements of an acquisition, and the waiting line (absent on a table without its columns). */
interface Acquiring {
  readonly take: NamedStatement<TakeParams>;
  /** Reads the row after the take: held by the taker? else the holder's remaining lease, and the line. */
  readonly readBack: NamedStatement<'owner' | 'key'>;
  readonly line: MysqlWaitingLine | undefined;
}

/**
 * The acquire statement: one INSERT ... ON DUPLICATE KEY UPDATE whose every assignment is guarded
 * by the same "free for this taker" test, so the row changes atomically or not at all. The owner
 * goes first: with MySQL's left-to-right assignment the later guards see the new owner
 * (`owner <=> :owner` true), with MariaDB's SIMULTANEOUS_ASSIGNMENT they see the old row; same
 * outcome. With the waiting line, the taker's place as next in line goes last, for the same reason.
 */
function takeStatement(t: string, lined: boolean): NamedStatement<TakeParams> {
  const free = lined ? FREE_IN_TURN : FREE_FOR_TAKER;
  return named(`INSERT INTO ${t} (key_hash, lock_key, owner, fence, expires_at) VALUES (:key, :display, :owner, ${NOW_US}, ${LEASE_END})
ON DUPLICATE KEY UPDATE
  owner = IF(${free}, :owner, owner),
  fence = IF(${free}, GREATEST(fence + 1, ${NOW_US}), fence),
  expires_at = IF(${free}, ${LEASE_END}, expires_at)${
    lined
      ? `,
  next_owner = IF((${free}) AND next_owner <=> :owner, NULL, next_owner)`
      : ''
  }`);
}

/**
 * MySQL 8 / MariaDB 10.11 statements. Acquire is one INSERT ... ON DUPLICATE KEY UPDATE (see
 * takeStatement); a read of the row then says who holds it, and where the waiting line stands
 * (mysql-waiting-line.ts). UTC_TIMESTAMP keeps the expiry independent of session time zones and DST.
 */
export class MysqlDialect implements SqlDialect {
  private readonly table: string;
  /** Waiters take turns, unless ensureTable() found a table without the line's columns and could not add them. */
  private acquiring: Acquiring;
  private readonly renewSql: string;
  private readonly stillHeldSql: string;
  private readonly releaseSql: string;
  private readonly pruneSql: string;

  constructor(
    private readonly pool: MysqlPromisePool,
    private readonly tableName: TableName,
    private readonly ownsPool: boolean,
  ) {
    const t = (this.table = quoteTableName(tableName, '`'));
    this.acquiring = this.acquiringStatements(true);
    this.renewSql = `UPDATE ${t} SET expires_at = UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
    this.stillHeldSql = `SELECT 1 AS held FROM ${t} WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
    this.releaseSql = `UPDATE ${t} SET owner = NULL, expires_at = UTC_TIMESTAMP(3) WHERE key_hash = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(3)`;
    // Rows whose lease ended ? µs ago and whose fence the clock passed by as much, oldest first. The
    // limit is a constant of the library, written in the statement (MySQL wants LIMIT as an integer).
    this.pruneSql = `DELETE FROM ${t} WHERE expires_at < UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND AND fence < ${NOW_US} - ? ORDER BY expires_at LIMIT `;
  }

  async ensureTable(): Promise<void> {
    const { schema, table } = this.tableName;
    const where = 'table_schema = COALESCE(?, DATABASE()) AND table_name = ?';
    const [rows] = await this.pool.execute(
      `SELECT
  (SELECT COUNT(*) FROM information_schema.tables WHERE ${where}) AS present,
  (SELECT COUNT(*) FROM information_schema.statistics WHERE ${where} AND index_name = ?) AS indexed,
  (SELECT COUNT(*) FROM information_schema.columns WHERE ${where} AND column_name = 'next_owner') AS lined`,
      [schema ?? null, table, schema ?? null, table, expiryIndexName(this.tableName), schema ?? null, table],
    );
    const found = (rows as { present: number | string; indexed: number | string; lined: number | string }[])[0];
    let lined = true;
    if (Number(found?.present) > 0) {
      // A table of a version before the sweep: add the index online, in the background (another
      // instance doing the same fails on the duplicate name). Without it the sweep still works, reading more.
      if (Number(found?.indexed) === 0)
        void this.pool.execute(mysqlIndexDdl(this.tableName), []).catch(() => undefined);
      if (Number(found?.lined) === 0) lined = await this.addLine();
    } else {
      // IF NOT EXISTS under the metadata lock: concurrent creators all succeed.
      await this.pool.execute(mysqlTableDdl(this.tableName), []);
    }
    if (!lined) this.acquiring = this.acquiringStatements(false);
  }

  private acquiringStatements(lined: boolean): Acquiring {
    const t = this.table;
    return {
      take: takeStatement(t, lined),
      readBack: named(
        `SELECT owner <=> :owner AS mine, fence, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expires_at) AS ttl_us${lined ? `, ${LINE_READ_BACK}` : ''} FROM ${t} WHERE key_hash = :key`,
      ),
      line: lined ? new MysqlWaitingLine(t, (sql, values) => this.change(sql, values)) : undefined,
    };
  }

  /** Adds the waiting line's columns to a table of an earlier version; false if that is refused (no ALTER privilege): waiters then poll unordered, as before. */
  private async addLine(): Promise<boolean> {
    try {
      await this.pool.execute(mysqlLineDdl(this.tableName), []);
      return true;
    } catch (error) {
      return mysqlErrorNumber(error) === DUPLICATE_COLUMN;
    }
  }

  async pruneIdleRows(idleKeyTtlMs: number, limit: number): Promise<number> {
    const idleUs = idleKeyTtlMs * 1000;
    const [header] = await this.pool.execute(this.pruneSql + String(Math.floor(limit)), [idleUs, idleUs]);
    return (header as MysqlResultHeader).affectedRows;
  }

  async take(row: LeaseRow, leaseMs: number, place: WaitPlace): Promise<TakeResult> {
    const { take, readBack, line } = this.acquiring;
    const params = {
      key: row.keyHash,
      display: row.displayKey,
      owner: row.owner,
      leaseUs: leaseMs * 1000 + CLOCK_STEP_US,
    };
    await this.change(take.sql, take.values(params));
    const [rows] = await this.pool.execute(readBack.sql, readBack.values(params));
    const current = (rows as TakeReadBack[])[0];
    if (!current) return { taken: false, holderTtlMs: undefined };
    const ttlMs = Math.max(0, Math.ceil(Number(current.ttl_us) / 1000));
    if (Number(current.mine) === 1 && ttlMs > 0) {
      place.next = false;
      return { taken: true, fence: Number(current.fence) };
    }
    if (!line) return { taken: false, holderTtlMs: ttlMs };
    await line.keep(place, current as TakeReadBack & LineReadBack, row.keyHash, row.owner);
    // Free, but another waiter's turn: how long that takes is not known.
    return { taken: false, holderTtlMs: ttlMs > 0 ? ttlMs : undefined };
  }

  async renew(keyHash: string, owner: string, leaseMs: number): Promise<boolean> {
    if ((await this.change(this.renewSql, [leaseMs * 1000 + CLOCK_STEP_US, keyHash, owner])).affectedRows > 0)
      return true;
    // 0 rows can also mean "matched but unchanged" when the pool counts changed rows, not found rows.
    const [rows] = await this.pool.execute(this.stillHeldSql, [keyHash, owner]);
    return (rows as unknown[]).length > 0;
  }

  async release(keyHash: string, owner: string): Promise<boolean> {
    return (await this.change(this.releaseSql, [keyHash, owner])).affectedRows > 0;
  }

  async leaveLine(keyHash: string, owner: string): Promise<void> {
    await this.acquiring.line?.leave(keyHash, owner);
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
