import type { MysqlPromisePool, MysqlResultHeader } from './mysql-driver.js';
import type { HeldRow, SqlInspectionQueries } from './sql-inspection.js';
import { quoteTableName, type TableName } from './sql-names.js';

const COLUMNS = 'key_hash, lock_key, owner, fence, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), expires_at) AS ttl_us';
const HELD = 'owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(3)';
/** Reads and guarded updates before eviction gives up on a row whose holder keeps changing. */
const EVICT_TRIES = 3;

interface MysqlHeldRow {
  readonly key_hash: string;
  readonly lock_key: string;
  readonly owner: string;
  readonly fence: string | number;
  readonly ttl_us: string | number;
}

/** MySQL / MariaDB statements of inspection; eviction is a read then an update guarded by the owner read. */
export class MysqlInspectionQueries implements SqlInspectionQueries {
  private readonly heldSql: string;
  private readonly pageSql: string;
  private readonly evictSql: string;

  constructor(
    private readonly pool: MysqlPromisePool,
    table: TableName,
  ) {
    const t = quoteTableName(table, '`');
    this.heldSql = `SELECT ${COLUMNS} FROM ${t} WHERE key_hash = ? AND ${HELD}`;
    // LIMIT is inlined (a whole number checked by the engine): prepared LIMIT placeholders differ between MySQL and MariaDB.
    this.pageSql = `SELECT ${COLUMNS} FROM ${t} WHERE ${HELD} AND lock_key LIKE ? ESCAPE '!' AND key_hash > ? ORDER BY key_hash LIMIT `;
    this.evictSql = `UPDATE ${t} SET owner = NULL, expires_at = UTC_TIMESTAMP(3) WHERE key_hash = ? AND owner = ? AND ${HELD}`;
  }

  async held(keyHash: string): Promise<HeldRow | undefined> {
    const [rows] = await this.pool.execute(this.heldSql, [keyHash]);
    const row = (rows as MysqlHeldRow[])[0];
    return row ? toRow(row) : undefined;
  }

  async page(pattern: string, after: string, limit: number): Promise<HeldRow[]> {
    const [rows] = await this.pool.execute(this.pageSql + String(Math.floor(limit)), [pattern, after]);
    return (rows as MysqlHeldRow[]).map(toRow);
  }

  async evict(keyHash: string): Promise<HeldRow | undefined> {
    for (let attempt = 0; attempt < EVICT_TRIES; attempt++) {
      const row = await this.held(keyHash);
      if (!row) return undefined;
      const [header] = await this.pool.execute(this.evictSql, [keyHash, row.owner]);
      if ((header as MysqlResultHeader).affectedRows > 0) return row;
    }
    return undefined;
  }
}

function toRow(row: MysqlHeldRow): HeldRow {
  return {
    keyHash: row.key_hash,
    lockKey: row.lock_key,
    owner: row.owner,
    fence: Number(row.fence),
    ttlMs: Math.max(0, Math.ceil(Number(row.ttl_us) / 1000)),
  };
}
