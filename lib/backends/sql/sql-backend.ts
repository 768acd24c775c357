import { DEFAULT_DRIFT_FACTOR } from '../drift.js';
import { toBackendError } from '../../util/backend-error.js';
import type { BackendCapabilities, ClaimRequest, LockBackend, LockClaim } from '../../engine/lock-backend.js';
import { SqlClaim } from './sql-claim.js';
import type { SqlDialect } from './sql-dialect.js';
import { DEFAULT_IDLE_KEY_TTL_MS } from '../idle-key-ttl.js';
import { IdleRowSweeper } from './idle-row-sweeper.js';
import { SqlInspection, type SqlInspectionQueries } from './sql-inspection.js';

/**
 * A lease table in PostgreSQL or MySQL/MariaDB: one row per key (owner, fence, expires_at), every
 * operation one short autocommit statement judged by the database clock. Rows of keys idle for
 * longer than `idleKeyTtlMs` are deleted by a bounded periodic sweep (docs/backends/sql.md, Footprint).
 * The claim logic is shared; each database contributes its statements through a {@link SqlDialect}.
 */
export class SqlBackend implements LockBackend {
  /** minHoldMs: a release sets the row's expiry to the database's now + the rest of it, owner-checked. */
  readonly capabilities: BackendCapabilities = { minHold: true, fenced: true };
  private tableReady: Promise<void> | undefined;
  private closed = false;
  /** @internal Deletes the rows of idle keys; runs from the first lock on. */
  readonly sweeper: IdleRowSweeper;
  readonly inspection: SqlInspection | undefined;

  constructor(
    readonly name: 'postgres' | 'mysql',
    /** @internal */
    readonly dialect: SqlDialect,
    idleKeyTtlMs = DEFAULT_IDLE_KEY_TTL_MS,
    /** The statements of `inspect`, `list` and `forceRelease` (sql-inspection.ts). */
    inspectionQueries?: SqlInspectionQueries,
    /** @internal Clock drift allowance as a share of the lease (the `driftFactor` option). */
    readonly driftFactor = DEFAULT_DRIFT_FACTOR,
    /** The database's host:port (never its credentials), for error messages. */
    readonly address?: string,
  ) {
    this.inspection = inspectionQueries && new SqlInspection(() => this.ensureTable(), inspectionQueries);
    this.sweeper = new IdleRowSweeper((limit) => dialect.pruneIdleRows(idleKeyTtlMs, limit), idleKeyTtlMs);
  }

  claim(request: ClaimRequest): LockClaim {
    return new SqlClaim(this, request);
  }

  /** @internal Creates the table on first use, then starts the sweep; a failed attempt is retried by the next caller. */
  ensureTable(): Promise<void> {
    this.tableReady ??= this.dialect.ensureTable().then(
      () => {
        if (!this.closed) this.sweeper.start();
      },
      (error: unknown) => {
        this.tableReady = undefined;
        throw error;
      },
    );
    return this.tableReady;
  }

  /** `SELECT 1`; rejects with LockBackendError when the database does not answer. */
  async ping(): Promise<void> {
    await this.dialect.ping().catch((error: unknown) => {
      throw toBackendError(this.name, error, this.address);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sweeper.stop();
    await this.dialect.close();
  }
}
