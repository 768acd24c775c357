import type { LeaseRow, ReleaseNotifier, SqlDialect, TakeResult } from './sql-dialect.js';
import { breakPgPool, PG_ERROR, pgErrorCode, type PgPool } from './postgres-driver.js';
import { expiryIndexName, quoteTableName, type TableName } from './sql-names.js';
import { endOrBreak } from './connection-end.js';

/** The lease table, as the backend creates it on first use (documented in docs/backends/sql.md). */
export function postgresTableDdl(name: TableName): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteTableName(name, '"')} (
  key_hash   char(64)     NOT NULL PRIMARY KEY,
  lock_key   varchar(255) NOT NULL,
  owner      varchar(255),
  fence      bigint       NOT NULL,
  expires_at timestamptz  NOT NULL
)`;
}

/** The index the idle-row sweep reads; CONCURRENTLY when added to a table that has rows (it then blocks no write). */
export function postgresIndexDdl(name: TableName, concurrently = false): string {
  return `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS "${expiryIndexName(name)}" ON ${quoteTableName(name, '"')} (expires_at)`;
}

const LEASE = `now() + $4::bigint * interval '1 millisecond'`;
/** The database clock in µs since 1970: a fresh row's fence, and the least fence of every acquisition (see docs/backends/sql.md, Footprint). */
const NOW_US = `(extract(epoch FROM now()) * 1000000)::bigint`;

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
  private readonly pruneSql: string;

  constructor(
    private readonly pool: PgPool,
    private readonly tableName: TableName,
    private readonly channel: string,
    readonly notifier: ReleaseNotifier | undefined,
    private readonly ownsPool: boolean,
  ) {
    const t = (this.table = quoteTableName(tableName, '"'));
    this.takeSql = `WITH taken AS (
  INSERT INTO ${t} AS l (key_hash, lock_key, owner, fence, expires_at)
  VALUES ($1, $2, $3, ${NOW_US}, ${LEASE})
  ON CONFLICT (key_hash) DO UPDATE
    SET owner = EXCLUDED.owner, fence = greatest(l.fence + 1, EXCLUDED.fence), expires_at = EXCLUDED.expires_at
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
    // Rows whose lease ended $1 ms ago and whose fence the clock passed by as much, oldest first,
    // skipping rows another statement has locked (being taken right now).
    this.pruneSql = `DELETE FROM ${t} WHERE key_hash IN (
  SELECT key_hash FROM ${t}
  WHERE expires_at < now() - $1::bigint * interval '1 millisecond' AND fence < ${NOW_US} - $1::bigint * 1000
  ORDER BY expires_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)`;
  }

  async ensureTable(): Promise<void> {
    const index = quoteTableName({ ...this.tableName, table: expiryIndexName(this.tableName) }, '"');
    const { rows } = await this.pool.query<{ present: boolean; indexed: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS present, to_regclass($2) IS NOT NULL AS indexed',
      [this.table, index],
    );
    if (rows[0]?.present) {
      // A table of a version before the sweep: add the index without blocking writes, in the background
      // (a concurrent build waits for running transactions). Without it the sweep still works, reading more.
      if (!rows[0].indexed) void this.pool.query(postgresIndexDdl(this.tableName, true)).catch(() => undefined);
      return;
    }
    await this.createIgnoringRaces(postgresTableDdl(this.tableName));
    await this.createIgnoringRaces(postgresIndexDdl(this.tableName));
  }

  async pruneIdleRows(idleKeyTtlMs: number, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(this.pruneSql, [idleKeyTtlMs, limit]);
    return rowCount ?? 0;
  }

  async take(row: LeaseRow, leaseMs: number): Promise<TakeResult> {
    const { rows } = await this.pool.query<{ fence: string | null; holder_ttl_ms: string | null }>(this.takeSql, [
      row.keyHash,
      row.displayKey,
      row.owner,
      leaseMs,
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
    if (this.ownsPool) await endOrBreak(this.pool.end(), () => breakPgPool(this.pool));
  }

  private async createIgnoringRaces(ddl: string): Promise<void> {
    try {
      await this.pool.query(ddl);
    } catch (error) {
      // Two instances creating it at once: the loser trips over the winner's catalog rows (the
      // table, or its row type; which one depends on timing).
      const code = pgErrorCode(error);
      if (code !== PG_ERROR.UNIQUE_VIOLATION && code !== PG_ERROR.DUPLICATE_TABLE && code !== PG_ERROR.DUPLICATE_OBJECT)
        throw error;
    }
  }
}
