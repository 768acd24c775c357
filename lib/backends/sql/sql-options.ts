import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';

/** How long connecting to the database may take for clients this library creates. */
export const CONNECT_TIMEOUT_MS = 5_000;
/** Connections in pools this library creates. */
export const POOL_SIZE = 10;
/** Shown to database operators (pg_stat_activity, SHOW PROCESSLIST). */
export const APPLICATION_NAME = 'nestjs-distributed-lock';

/**
 * Exactly one of a connection `url` (the backend creates and closes the pool) or a pool of the
 * user's, `client` (left open). Throws InvalidLockArgumentError naming the options.
 */
export function pickConnection<Pool>(
  backend: string,
  url: unknown,
  client: unknown,
  isPool: (value: unknown) => value is Pool,
): { readonly url: string } | { readonly pool: Pool } {
  if (url !== undefined && client !== undefined) {
    throw new InvalidLockArgumentError(`${backend} backend: give either url or client, not both`);
  }
  if (client !== undefined) {
    if (!isPool(client))
      throw new InvalidLockArgumentError(
        `${backend} backend: client must be a ${backend === 'postgres' ? 'pg Pool' : 'mysql2 Pool'}, got ${describe(client)}`,
      );
    return { pool: client };
  }
  if (typeof url !== 'string' || url.trim() === '') {
    throw new InvalidLockArgumentError(
      `${backend} backend needs url (a connection URL) or client (a pool of yours), got url ${describe(url)}`,
    );
  }
  return { url };
}
