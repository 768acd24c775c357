import { InvalidLockArgumentError } from '../errors.js';
import { describe } from '../engine/lock-options.js';

/** The databases a `SqlFenceGuard` speaks to. `'mysql'` covers MySQL 8 and MariaDB 10.5+. */
export type FenceDialect = 'postgres' | 'mysql';

/** The fence table used when the options name none. */
export const DEFAULT_FENCE_TABLE = 'fenced_resources';

/**
 * The resource name of the table's floor row: the highest fence of the rows pruned so far.
 * Resource names given to `check` are never empty, so it cannot meet one.
 */
export const FLOOR_RESOURCE = '';

/** The longest resource name, in UTF-8 bytes (the MySQL key column is VARBINARY(255)). */
const MAX_RESOURCE_BYTES = 255;

/** `table` or `schema.table`; each part a plain identifier that fits both PostgreSQL (63) and MySQL (64). */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** Checks the dialect option. Throws InvalidLockArgumentError. */
export function parseFenceDialect(value: unknown): FenceDialect {
  if (value === 'postgres' || value === 'mysql') return value;
  throw new InvalidLockArgumentError(
    `SqlFenceGuard: \`dialect\` must be 'postgres' or 'mysql' (MySQL and MariaDB), got ${describe(value)}`,
  );
}

/** The fence table's name, validated and quoted for `dialect`. Throws InvalidLockArgumentError. */
export function quotedFenceTable(dialect: FenceDialect, table: unknown = DEFAULT_FENCE_TABLE): string {
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    throw new InvalidLockArgumentError(
      `SqlFenceGuard: \`table\` must be an identifier such as '${DEFAULT_FENCE_TABLE}' or 'schema.${DEFAULT_FENCE_TABLE}' (letters, digits, _; at most 63 each), got ${describe(table)}`,
    );
  }
  const quote = dialect === 'postgres' ? '"' : '`';
  return table
    .split('.')
    .map((part) => `${quote}${part}${quote}`)
    .join('.');
}

/** Checks a resource name given to `check`. Throws InvalidLockArgumentError. */
export function checkResource(resource: unknown): string {
  if (typeof resource !== 'string' || resource === FLOOR_RESOURCE || Buffer.byteLength(resource) > MAX_RESOURCE_BYTES) {
    throw new InvalidLockArgumentError(
      `SqlFenceGuard: a resource must be a non-empty string of at most ${MAX_RESOURCE_BYTES} UTF-8 bytes, got ${describe(resource)}`,
    );
  }
  return resource;
}

/**
 * The statements that create a fence table and its floor row, for `dialect`: what `ensureTable`
 * runs, for migration tools. Each statement is idempotent.
 *
 * @param table `table` or `schema.table`; default `fenced_resources`.
 */
export function fenceTableDdl(dialect: FenceDialect, table: string = DEFAULT_FENCE_TABLE): string[] {
  const t = quotedFenceTable(parseFenceDialect(dialect), table);
  if (dialect === 'postgres') {
    return [
      `CREATE TABLE IF NOT EXISTS ${t} (
  resource   text        NOT NULL PRIMARY KEY,
  highest    bigint      NOT NULL,
  touched_at timestamptz NOT NULL DEFAULT now()
)`,
      `INSERT INTO ${t} (resource, highest) VALUES ('${FLOOR_RESOURCE}', 0) ON CONFLICT (resource) DO NOTHING`,
    ];
  }
  return [
    `CREATE TABLE IF NOT EXISTS ${t} (
  resource   VARBINARY(${MAX_RESOURCE_BYTES}) NOT NULL PRIMARY KEY,
  highest    BIGINT         NOT NULL,
  touched_at DATETIME(6)    NOT NULL
) ENGINE=InnoDB`,
    `INSERT INTO ${t} (resource, highest, touched_at) VALUES ('${FLOOR_RESOURCE}', 0, UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE resource = resource`,
  ];
}
