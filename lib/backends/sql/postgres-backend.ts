import { checkDriftFactor } from '../drift.js';
import type { PostgresBackendOptions } from '../backend-options.js';
import { resolveIdleKeyTtlMs } from '../idle-key-ttl.js';
import type { LockBackend } from '../../engine/lock-backend.js';
import { isPgPool, loadPgDriver, type PgClient, type PgPool } from './postgres-driver.js';
import { PostgresDialect } from './postgres-dialect.js';
import { PostgresInspectionQueries } from './postgres-inspection.js';
import { PostgresReleaseListener } from './postgres-listener.js';
import { APPLICATION_NAME, CONNECT_TIMEOUT_MS, pickConnection, POOL_SIZE } from './sql-options.js';
import { parseTableName, releaseChannel } from './sql-names.js';
import { SqlBackend } from './sql-backend.js';
import { postgresAddress, urlAddress } from '../driver-address.js';

/**
 * The `postgres` backend (driver: `pg`). With `url` it creates a pool and closes it
 * on shutdown; a pool of yours (`client`) stays open. Either way it opens one extra connection of its own
 * for LISTEN (from the pool's own settings), and closes it on shutdown.
 * Throws InvalidLockArgumentError for bad options; never connects before the first lock.
 */
export async function createPostgresBackend(options: PostgresBackendOptions): Promise<LockBackend> {
  const table = parseTableName(options.table, 'postgres');
  const idleKeyTtlMs = resolveIdleKeyTtlMs(options.idleKeyTtlMs, 'postgres');
  const driftFactor = checkDriftFactor('postgres', options.driftFactor);
  const connection = pickConnection('postgres', options.url, options.client, isPgPool);
  const channel = releaseChannel(table);
  if ('url' in connection) {
    const { Pool, Client } = await loadPgDriver();
    const config = {
      connectionString: connection.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      fallback_application_name: APPLICATION_NAME,
    };
    const pool = new Pool({ ...config, max: POOL_SIZE, idleTimeoutMillis: 10_000 });
    // An idle connection dropped by the server (restart, failover) is replaced on the next query; without a listener it would crash the app.
    pool.on('error', () => undefined);
    const listener = new PostgresReleaseListener(() => new Client(config), channel);
    return new SqlBackend(
      'postgres',
      new PostgresDialect(pool, table, channel, listener, true),
      idleKeyTtlMs,
      new PostgresInspectionQueries(pool, table, channel),
      driftFactor,
      urlAddress(connection.url),
    );
  }
  const listener = await listenerForUserPool(connection.pool, channel);
  return new SqlBackend(
    'postgres',
    new PostgresDialect(connection.pool, table, channel, listener, false),
    idleKeyTtlMs,
    new PostgresInspectionQueries(connection.pool, table, channel),
    driftFactor,
    postgresAddress(connection.pool.options),
  );
}

/** A listening connection made with the user's pool settings, or none (waiters then poll) if the pool does not expose them. */
async function listenerForUserPool(pool: PgPool, channel: string): Promise<PostgresReleaseListener | undefined> {
  const settings = pool.options;
  if (!settings) return undefined;
  const ClientClass = pool.Client ?? (await loadPgDriver()).Client;
  const config = {
    ...settings,
    connectionTimeoutMillis: settings.connectionTimeoutMillis || CONNECT_TIMEOUT_MS,
    keepAlive: true,
  };
  return new PostgresReleaseListener((): PgClient => new ClientClass(config), channel);
}
