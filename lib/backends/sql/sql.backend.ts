import { toBackendError } from '../../engine/backend-error.js';
import type { ClaimRequest, LockBackend, LockClaim } from '../lock-backend.js';
import { SqlClaim } from './sql-claim.js';
import type { SqlDialect } from './sql-dialect.js';

/**
 * A lease table in PostgreSQL or MySQL/MariaDB: one row per key ever locked (owner, fence,
 * expires_at), every operation one short autocommit statement judged by the database clock.
 * The claim logic is shared; each database contributes its statements through a {@link SqlDialect}.
 */
export class SqlBackend implements LockBackend {
  private tableReady: Promise<void> | undefined;
  private closed = false;

  constructor(
    readonly name: 'postgres' | 'mysql',
    /** @internal */
    readonly dialect: SqlDialect,
  ) {}

  claim(request: ClaimRequest): LockClaim {
    return new SqlClaim(this, request);
  }

  /** @internal Creates the table on first use; a failed attempt is retried by the next caller. */
  ensureTable(): Promise<void> {
    this.tableReady ??= this.dialect.ensureTable().catch((error: unknown) => {
      this.tableReady = undefined;
      throw error;
    });
    return this.tableReady;
  }

  /** `SELECT 1`; rejects with LockBackendError when the database does not answer. */
  async ping(): Promise<void> {
    await this.dialect.ping().catch((error: unknown) => {
      throw toBackendError(this.name, error);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.dialect.close();
  }
}
