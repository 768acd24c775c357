import type { BackendOptions } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import type { ContractTarget } from '../contract/contract-target.js';

/** A SQL store for the contract suite and the SQL scenarios: one server per test file, shared by both. */
export interface SqlTarget extends ContractTarget {
  readonly name: 'postgres' | 'mysql';
  /** Connection URL of the running server (for child processes). */
  url(): string;
  /** Backend options with a pool created by the backend; `table` defaults to the default table. */
  options(table?: string): BackendOptions;
  /** Backend options whose connections the database can count by `tag` (an identifier). */
  taggedOptions(tag: string): Promise<BackendOptions>;
  /** Open connections made with `taggedOptions(tag)`. */
  countConnections(tag: string): Promise<number>;
  /** A backend over a pool of the test's (size `max`, running `sessionSql` on each new connection), which the backend must leave open. */
  createBackendWithOwnPool(max: number, sessionSql?: string): Promise<{ backend: LockBackend; pool: TestPool }>;
  /** The n-th (1-based) placeholder in this dialect: `$n` or `?`. */
  param(n: number): string;
  /** Runs one statement on the test's admin connection. */
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** The table name quoted for this dialect. */
  quote(table: string): string;
  /** How many tables named `table` exist in the test database. */
  countTables(table: string): Promise<number>;
  /** A clean stop keeping the data, and a start on the same port and data dir. */
  stopDatabase(): Promise<void>;
  startDatabase(): Promise<void>;
}

/** A driver pool as the tests use it. */
export interface TestPool {
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  end(): Promise<void>;
}
