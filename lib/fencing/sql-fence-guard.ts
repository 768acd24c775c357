import { InvalidLockArgumentError, StaleFenceError } from '../errors.js';
import type { Lock } from '../engine/lock.js';
import { describe } from '../engine/lock-options.js';
import { fenceOf } from './fence-of.js';
import { fenceStatements, HIGHEST, type FenceStatements } from './fence-statements.js';
import { checkResource, fenceTableDdl, parseFenceDialect, quotedFenceTable, type FenceDialect } from './fence-table.js';
import { columnValues } from './result-rows.js';

/**
 * Runs one statement with positional parameters (`$1` on PostgreSQL, `?` on MySQL) on the caller's
 * connection or transaction, and resolves what the driver returns: `pg` `client.query`, a mysql2
 * connection's `query`, TypeORM's `EntityManager.query`, Knex's `trx.raw`, Prisma's
 * `tx.$queryRawUnsafe(sql, ...params)`.
 */
export type FenceQuery = (sql: string, params: unknown[]) => Promise<unknown>;

/** Options of {@link SqlFenceGuard}. */
export interface SqlFenceGuardOptions {
  /** `'postgres'` (PostgreSQL) or `'mysql'` (MySQL 8, MariaDB). */
  dialect: FenceDialect;
  /** `table` or `schema.table`; default `fenced_resources`. */
  table?: string;
}

/** Options of {@link SqlFenceGuard.prune}. */
export interface FencePruneOptions {
  /** Rows whose fence has not been raised for this long are deleted; their fences stay covered by the table's floor. */
  olderThanMs: number;
}

/**
 * The resource side of fencing tokens on PostgreSQL and MySQL/MariaDB: remembers, per resource
 * name, the highest fence it has accepted, and refuses a lower one with `StaleFenceError`.
 *
 * Run `check` in the same transaction as the write it protects: the upsert locks the resource's
 * row until that transaction ends, so writers of one resource pass one at a time, and a rollback
 * takes the raised fence back with the write. See docs/fencing.md.
 */
export class SqlFenceGuard {
  /** The SQL dialect of the statements this guard sends. */
  readonly dialect: FenceDialect;
  private readonly ddl: string[];
  private readonly sql: FenceStatements;

  constructor(options: SqlFenceGuardOptions) {
    if (options === null || typeof options !== 'object')
      throw new InvalidLockArgumentError(`SqlFenceGuard: options must be an object, got ${describe(options)}`);
    this.dialect = parseFenceDialect(options.dialect);
    const table = quotedFenceTable(this.dialect, options.table);
    this.ddl = fenceTableDdl(this.dialect, options.table);
    this.sql = fenceStatements(this.dialect, table);
  }

  /**
   * Creates the fence table and its floor row when missing (the statements of `fenceTableDdl`).
   * Idempotent, also when several instances run it at once (run it outside a transaction for that).
   */
  async ensureTable(query: FenceQuery): Promise<void> {
    for (const statement of this.ddl) {
      // Two PostgreSQL sessions creating one table at once: the loser trips over the winner's catalog
      // rows (whatever the driver calls that error). Once the winner committed, IF NOT EXISTS holds.
      await query(statement, []).catch(() => query(statement, []));
    }
  }

  /**
   * Accepts `fence` for `resource` (equal to the highest accepted so far, or higher: then it becomes
   * the highest), or throws `StaleFenceError` when a higher fence was accepted before. A `Lock` whose
   * signal has aborted throws `LockLostError`; a lock without a fence, `InvalidLockArgumentError`.
   *
   * @param query runs a statement in the transaction of the write this check protects.
   * @param resource what is written: a non-empty name of at most 255 UTF-8 bytes, e.g. `'orders:42'`.
   */
  async check(query: FenceQuery, resource: string, fence: number | Lock): Promise<void> {
    const name = checkResource(resource);
    const value = fenceOf(fence);
    if (this.sql.refusal === 'returns') {
      const highest = this.highestOf(await query(this.sql.check, [name, value]), 'check');
      if (highest > value) throw new StaleFenceError(name, value, highest);
      return;
    }
    try {
      await query(this.sql.check, [name, value, value]);
    } catch (error) {
      // The statement fails on a refusal, or for any other reason: the locked read tells which.
      const highest = await query(this.sql.readHighest, [name]).then(
        (rows) => this.highestOf(rows, 'read', true),
        () => undefined,
      );
      if (highest !== undefined && highest > value) throw new StaleFenceError(name, value, highest, { cause: error });
      throw error;
    }
  }

  /**
   * Deletes the rows of resources whose fence has not been raised for `olderThanMs`, after raising
   * the table's floor to their highest fence: a resource checked again after its row went still
   * refuses every fence below the floor. Choose `olderThanMs` longer than any lock is held. Safe
   * with concurrent checks, inside a transaction or not.
   */
  async prune(query: FenceQuery, options: FencePruneOptions): Promise<void> {
    const olderThanMs = options?.olderThanMs;
    if (typeof olderThanMs !== 'number' || !Number.isSafeInteger(olderThanMs) || olderThanMs < 1) {
      throw new InvalidLockArgumentError(
        `SqlFenceGuard.prune: \`olderThanMs\` must be a whole number of ms from 1, got ${describe(olderThanMs)}`,
      );
    }
    const raised = await query(this.sql.raiseFloor, [olderThanMs]);
    const floor = this.highestOf(
      this.sql.readFloor === undefined ? raised : await query(this.sql.readFloor, []),
      'prune',
    );
    await query(this.sql.prune, [olderThanMs, floor]);
  }

  /** The largest fence among the rows a statement returned. */
  private highestOf(result: unknown, statement: string, missingIsZero = false): number {
    const values = columnValues(result, HIGHEST)
      .map(Number)
      .filter((n) => Number.isFinite(n));
    if (values.length === 0) {
      if (missingIsZero) return 0;
      throw new InvalidLockArgumentError(
        `SqlFenceGuard: the ${statement} statement returned a row, but no \`${HIGHEST}\` column was found in what \`query\` resolved (${describe(result)}): ` +
          'pass a function that resolves the rows (or the driver result that holds them)',
      );
    }
    return Math.max(...values);
  }
}
