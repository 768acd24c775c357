import { createHash } from 'node:crypto';
import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';

/** The lease table used when the options name none. */
const DEFAULT_TABLE = 'distributed_locks';

/** `table` or `schema.table`; each part a plain identifier that fits both PostgreSQL (63) and MySQL (64). */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** A validated lease table name, split into its optional schema and the table. */
export interface TableName {
  readonly schema: string | undefined;
  readonly table: string;
  /** As the user wrote it, e.g. `'locks.distributed_locks'`. */
  readonly text: string;
}

/** Validates the `table` option (default `distributed_locks`). Throws InvalidLockArgumentError. */
export function parseTableName(value: unknown, backend: string): TableName {
  if (value === undefined) return { schema: undefined, table: DEFAULT_TABLE, text: DEFAULT_TABLE };
  if (typeof value !== 'string' || !TABLE_NAME.test(value)) {
    throw new InvalidLockArgumentError(
      `${backend} table must be an identifier such as 'distributed_locks' or 'schema.distributed_locks' (letters, digits, _; at most 63 each), got ${describe(value)}`,
    );
  }
  const dot = value.indexOf('.');
  return dot < 0
    ? { schema: undefined, table: value, text: value }
    : { schema: value.slice(0, dot), table: value.slice(dot + 1), text: value };
}

/** The name quoted for SQL: `"schema"."table"` (PostgreSQL) or `` `schema`.`table` `` (MySQL). Safe: parts match TABLE_NAME. */
export function quoteTableName(name: TableName, quote: '"' | '`'): string {
  const part = (identifier: string) => `${quote}${identifier}${quote}`;
  return name.schema === undefined ? part(name.table) : `${part(name.schema)}.${part(name.table)}`;
}

/** The PostgreSQL NOTIFY channel of one lease table: short, lower-case hex, never needs escaping. */
export function releaseChannel(name: TableName): string {
  return `ndl_release_${createHash('sha256').update(name.text).digest('hex').slice(0, 24)}`;
}

/**
 * The name of the lease table's index on `expires_at`: `<table>_expires_at`, or, when that would pass
 * the 63 characters PostgreSQL keeps, `ndl_expires_at_<hash of the table name>`. Never schema-qualified:
 * an index lives in its table's schema (PostgreSQL), or belongs to its table (MySQL).
 */
export function expiryIndexName(name: TableName): string {
  const readable = `${name.table}_expires_at`;
  return readable.length <= 63
    ? readable
    : `ndl_expires_at_${createHash('sha256').update(name.text).digest('hex').slice(0, 24)}`;
}
