import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';

/** How long connecting to the database may take for clients this library creates. */
export const CONNECT_TIMEOUT_MS = 5_000;
/** Connections in pools this library creates. */
export const POOL_SIZE = 10;
/** Shown to database operators (pg_stat_activity, SHOW PROCESSLIST). */
export const APPLICATION_NAME = 'nestjs-distributed-lock';

/**
 * Exactly one of a connection URL (the backend creates and closes the pool) or a pool of the
 * user's (left open). Throws InvalidLockArgumentError naming the options.
 */
export function pickConnection<Pool>(
  backend: string,
  url: { readonly name: string; readonly value: unknown },
  pool: unknown,
  isPool: (value: unknown) => value is Pool,
): { readonly url: string } | { readonly pool: Pool } {
  if (url.value !== undefined && pool !== undefined) {
    throw new InvalidLockArgumentError(`${backend} backend: give either ${url.name} or pool, not both`);
  }
  if (pool !== undefined) {
    if (!isPool(pool)) throw new InvalidLockArgumentError(`${backend} backend: pool must be a ${backend === 'postgres' ? 'pg Pool' : 'mysql2 Pool'}, got ${describe(pool)}`);
    return { pool };
  }
  if (typeof url.value !== 'string' || url.value.trim() === '') {
    throw new InvalidLockArgumentError(`${backend} backend needs ${url.name} (a connection URL) or pool, got ${url.name} ${describe(url.value)}`);
  }
  return { url: url.value };
}
