import type { LeaseRow, ReleaseNotifier, SqlDialect, TakeResult } from './sql-dialect.js';
import { PG_ERROR, pgErrorCode, type PgPool } from './postgres-driver.js';
import { quoteTableName, type TableName } from './sql-names.js';

/** The lease table, as the backend creates it on first use (documented in docs/backends/sql.md). */
export function postgresTableDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  key_hash   char(64)     NOT NULL PRIMARY KEY,
  lock_key   varchar(255) NOT NULL,
  owner      varchar(255),
  fence      bigint       NOT NULL,
  expires_at timestamptz  NOT NULL
)`;
}

const LEASE = `now() + $4::bigint * interval '1 millisecond'`;

/**
 * PostgreSQL statements. Acquire is one INSERT ... ON CONFLICT DO UPDATE ... WHERE expired, in a
 * CTE whose outer SELECT reads the holder's remaining lease from the same snapshot; release
 * frees the row and NOTIFYs waiters in the same statement.
 */
export class PostgresDialect implements SqlDialect {
  private readonly table: string;
  private readonly takeSql: string;
  private readonly renewSql: string;
  private readonly releaseSql: string;

  constructor(
    private readonly pool: PgPool,
    tableName: TableName,
    private readonly channel: string,
    readonly notifier: ReleaseNotifier | undefined,
    private readonly ownsPool: boolean,
  ) {
    const t = (this.table = quoteTableName(tableName, '"'));
    this.takeSql = `WITH taken AS (
  INSERT INTO ${t} AS l (key_hash, lock_key, owner, fence, expires_at)
  VALUES ($1, $2, $3, 1, ${LEASE})
  ON CONFLICT (key_hash) DO UPDATE
    SET owner = EXCLUDED.owner, fence = l.fence + 1, expires_at = EXCLUDED.expires_at
    WHERE l.owner IS NULL OR l.expires_at <= now()
  RETURNING l.fence
)
SELECT taken.fence,
  (SELECT greatest(0, ceil(extract(epoch FROM h.expires_at - now()) * 1000))::bigint
     FROM ${t} h WHERE h.key_hash = $1) AS holder_ttl_ms
FROM (SELECT 1) AS one LEFT JOIN taken ON true`;
    this.renewSql = `UPDATE ${t} SET expires_at = now() + $3::bigint * interval '1 millisecond'
WHERE key_hash = $1 AND owner = $2 AND expires_at > now()`;
    this.releaseSql = `WITH released AS (
  UPDATE ${t} SET owner = NULL, expires_at = now()
  WHERE key_hash = $1 AND owner = $2 AND expires_at > now()
  RETURNING key_hash
)
SELECT pg_notify($3, key_hash) FROM released`;
  }

  async ensureTable(): Promise<void> {
    const { rows } = await this.pool.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [this.table]);
    if (rows[0]?.present) return;
    try {
      await this.pool.query(postgresTableDdl(this.table));
    } catch (error) {
      // Two instances creating it at once: the loser trips over the winner's catalog rows (the
      // table, or its row type; which one depends on timing).
      const code = pgErrorCode(error);
      if (code !== PG_ERROR.UNIQUE_VIOLATION && code !== PG_ERROR.DUPLICATE_TABLE && code !== PG_ERROR.DUPLICATE_OBJECT) throw error;
    }
  }

  async take(row: LeaseRow, leaseMs: number): Promise<TakeResult> {
    const { rows } = await this.pool.query<{ fence: string | null; holder_ttl_ms: string | null }>(this.takeSql, [
      row.keyHash, row.displayKey, row.owner, leaseMs,
    ]);
    const result = rows[0];
    if (result?.fence != null) return { taken: true, fence: Number(result.fence) };
    return { taken: false, holderTtlMs: result?.holder_ttl_ms == null ? undefined : Number(result.holder_ttl_ms) };
  }

  async renew(keyHash: string, owner: string, leaseMs: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(this.renewSql, [keyHash, owner, leaseMs]);
    return rowCount === 1;
  }

  async release(keyHash: string, owner: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(this.releaseSql, [keyHash, owner, this.channel]);
    return rowCount === 1;
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.notifier?.close();
    if (this.ownsPool) await this.pool.end();
  }
}
