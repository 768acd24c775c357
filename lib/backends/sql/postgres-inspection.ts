import type { PgPool } from './postgres-driver.js';
import type { HeldRow, SqlInspectionQueries } from './sql-inspection.js';
import { quoteTableName, type TableName } from './sql-names.js';

const COLUMNS = `key_hash, lock_key, owner, fence, greatest(0, ceil(extract(epoch FROM expires_at - now()) * 1000))::bigint AS ttl_ms`;
const HELD = 'owner IS NOT NULL AND expires_at > now()';

interface PgHeldRow {
  readonly key_hash: string;
  readonly lock_key: string;
  readonly owner: string;
  readonly fence: string | number;
  readonly ttl_ms: string | number;
}

/** PostgreSQL statements of inspection: reads by primary key or keyset, eviction with NOTIFY in one statement. */
export class PostgresInspectionQueries implements SqlInspectionQueries {
  private readonly heldSql: string;
  private readonly pageSql: string;
  private readonly evictSql: string;

  constructor(
    private readonly pool: PgPool,
    table: TableName,
    private readonly channel: string,
  ) {
    const t = quoteTableName(table, '"');
    this.heldSql = `SELECT ${COLUMNS} FROM ${t} WHERE key_hash = $1 AND ${HELD}`;
    this.pageSql = `SELECT ${COLUMNS} FROM ${t} WHERE ${HELD} AND lock_key LIKE $1 ESCAPE '!' AND key_hash > $2 ORDER BY key_hash LIMIT $3`;
    // The old row comes from a locked read in the same statement, so the reply names the evicted owner.
    this.evictSql = `WITH old AS (SELECT key_hash, owner, fence, expires_at FROM ${t} WHERE key_hash = $1 AND ${HELD} FOR UPDATE),
freed AS (
  UPDATE ${t} AS l SET owner = NULL, expires_at = now() FROM old WHERE l.key_hash = old.key_hash
  RETURNING old.key_hash, l.lock_key, old.owner, old.fence, greatest(0, ceil(extract(epoch FROM old.expires_at - now()) * 1000))::bigint AS ttl_ms
)
SELECT freed.*, pg_notify($2, freed.key_hash) FROM freed`;
  }

  async held(keyHash: string): Promise<HeldRow | undefined> {
    const { rows } = await this.pool.query<PgHeldRow>(this.heldSql, [keyHash]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  async page(pattern: string, after: string, limit: number): Promise<HeldRow[]> {
    const { rows } = await this.pool.query<PgHeldRow>(this.pageSql, [pattern, after, limit]);
    return rows.map(toRow);
  }

  async evict(keyHash: string): Promise<HeldRow | undefined> {
    const { rows } = await this.pool.query<PgHeldRow>(this.evictSql, [keyHash, this.channel]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }
}

function toRow(row: PgHeldRow): HeldRow {
  return {
    keyHash: row.key_hash,
    lockKey: row.lock_key,
    owner: row.owner,
    fence: Number(row.fence),
    ttlMs: Number(row.ttl_ms),
  };
}
