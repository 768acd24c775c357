import { loadOptional } from '../../util/load-optional.js';

// The parts of `mysql2` this backend uses, typed here so that no declaration file refers to the optional peer.

/** What mysql2 resolves for INSERT/UPDATE/DELETE. */
export interface MysqlResultHeader {
  readonly affectedRows: number;
}

/** A `mysql2/promise` pool (`createPool(...).promise()`). */
export interface MysqlPromisePool {
  execute(sql: string, values: unknown[]): Promise<[unknown, unknown]>;
  end(): Promise<void>;
}

/** mysql2's internals that {@link breakMysqlPool} relies on; optional, so it does nothing if a version differs. */
interface MysqlPoolInternals {
  readonly pool?: { readonly _allConnections?: MysqlConnections };
}

interface MysqlConnections {
  readonly length: number;
  get(index: number): { destroy(): void } | undefined;
}

/** Destroys every connection of a mysql2 promise pool, busy or idle (their queries fail): for a pool that does not end. */
export function breakMysqlPool(pool: MysqlPromisePool): void {
  const connections = mysqlConnections(pool);
  for (let i = 0; connections && i < connections.length; i++) connections.get(i)?.destroy();
}

/** @internal Every connection of a mysql2 promise pool, busy or idle, or undefined if this mysql2 version keeps them elsewhere. */
export function mysqlConnections(pool: MysqlPromisePool): MysqlConnections | undefined {
  return (pool as MysqlPoolInternals).pool?._allConnections;
}

/** A callback-style `mysql2` pool: its `promise()` gives the promise pool. */
interface MysqlCallbackPool {
  promise(): MysqlPromisePool;
}

export interface MysqlDriver {
  createPool(config: Record<string, unknown>): MysqlCallbackPool;
}

/** MySQL/MariaDB error numbers this backend tells apart. */
export const MYSQL_ERROR = {
  LOCK_DEADLOCK: 1213,
  LOCK_WAIT_TIMEOUT: 1205,
} as const;

export function mysqlErrorNumber(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}

/** Imports `mysql2` lazily, or names the package to install. */
export async function loadMysqlDriver(): Promise<MysqlDriver> {
  const module = await loadOptional<MysqlDriver & { default?: MysqlDriver }>('mysql2', "The 'mysql' backend");
  return module.default ?? module;
}

/** A `mysql2/promise` pool as it is, or the promise side of a callback `mysql2` pool; undefined for anything else. */
export function asPromisePool(value: unknown): MysqlPromisePool | undefined {
  const pool = value as Partial<MysqlPromisePool & MysqlCallbackPool> | null;
  if (typeof pool?.promise === 'function') return pool.promise();
  if (typeof pool?.execute === 'function' && typeof pool.end === 'function') return pool as MysqlPromisePool;
  return undefined;
}
