import { loadOptional } from '../../util/load-optional.js';

// The parts of `pg` this backend uses, typed here so that no declaration file refers to the optional peer.

interface PgQueryResult<Row> {
  readonly rows: Row[];
  readonly rowCount: number | null;
}

interface PgQueryable {
  query<Row = Record<string, unknown>>(text: string, values?: unknown[]): Promise<PgQueryResult<Row>>;
}

export interface PgNotification {
  readonly channel: string;
  readonly payload?: string;
}

export interface PgClient extends PgQueryable {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: PgNotification) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
}

type PgClientClass = new (config: Record<string, unknown>) => PgClient;

export interface PgPool extends PgQueryable {
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** pg-pool keeps the config it creates its clients with, and the client class. */
  readonly options?: Record<string, unknown>;
  readonly Client?: PgClientClass;
}

export interface PgDriver {
  readonly Pool: new (config: Record<string, unknown>) => PgPool;
  readonly Client: PgClientClass;
}

/** pg's internals that {@link breakPgConnection} relies on; optional, so it does nothing if a version differs. */
interface PgClientInternals {
  readonly connection?: { readonly stream?: { destroy(): void } };
}

/** Destroys a pg client's socket (its query, if any, fails): for a connection that does not end. */
export function breakPgConnection(client: PgClient | PgClientInternals): void {
  pgSocket(client)?.destroy();
}

/** @internal The socket of a pg client, or undefined if this pg version keeps it elsewhere. */
export function pgSocket(client: PgClient | PgClientInternals): { destroy(): void } | undefined {
  return (client as PgClientInternals).connection?.stream;
}

/** @internal The clients of a pg-pool, busy or idle, or undefined if this pg-pool version keeps them elsewhere. */
export function pgPoolClients(pool: PgPool): readonly PgClientInternals[] | undefined {
  return (pool as { readonly _clients?: readonly PgClientInternals[] })._clients;
}

/** Destroys the sockets of every connection a pg-pool holds, busy or idle. */
export function breakPgPool(pool: PgPool): void {
  for (const client of pgPoolClients(pool) ?? []) breakPgConnection(client);
}

/** PostgreSQL error codes this backend tells apart. */
export const PG_ERROR = {
  UNIQUE_VIOLATION: '23505',
  DUPLICATE_TABLE: '42P07',
  /** `type "<table>" already exists`: the table's row type, when another session created the table a moment earlier. */
  DUPLICATE_OBJECT: '42710',
} as const;

export function pgErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Imports `pg` lazily, or names the package to install. */
export async function loadPgDriver(): Promise<PgDriver> {
  const module = await loadOptional<PgDriver & { default?: PgDriver }>('pg', "The 'postgres' backend");
  return module.default ?? module;
}

/** Whether `value` looks like a pg Pool (or anything with the same `query`). */
export function isPgPool(value: unknown): value is PgPool {
  return typeof (value as PgPool | null)?.query === 'function' && typeof (value as PgPool).end === 'function';
}
