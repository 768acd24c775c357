import { InvalidLockArgumentError } from '../../errors.js';
import type {
  ListPage,
  ListRequest,
  LockInspection,
  StoredHolder,
  StoredLockState,
} from '../../engine/lock-inspection.js';
import { keyHash } from './sql-keys.js';

/** One held row as inspection reads it. */
export interface HeldRow {
  readonly keyHash: string;
  readonly lockKey: string;
  readonly owner: string;
  readonly fence: number;
  readonly ttlMs: number;
}

/** The statements inspection needs from one database (postgres-inspection.ts, mysql-inspection.ts). */
export interface SqlInspectionQueries {
  /** The row of `keyHash` if it is held now (owner set, lease not ended by the database clock). */
  held(keyHash: string): Promise<HeldRow | undefined>;
  /** At most `limit` held rows whose `lock_key` is LIKE `pattern` (escape character `!`) and key_hash > `after`, by key_hash. */
  page(pattern: string, after: string, limit: number): Promise<HeldRow[]>;
  /** Frees the row if held (fence kept), announcing it to waiters; resolves the evicted row. */
  evict(keyHash: string): Promise<HeldRow | undefined>;
}

/**
 * Inspection of the SQL backends: the lease table has the holder's owner id, fence and lease end
 * (database clock). It cannot know waiters (they poll or listen, keeping no row), and lists keys
 * by their `lock_key` column: the first 200 characters, control characters shown as U+FFFD, so a
 * longer key is listed by its start (inspect and forceRelease need the whole key).
 */
export class SqlInspection implements LockInspection {
  constructor(
    private readonly ready: () => Promise<void>,
    private readonly queries: SqlInspectionQueries,
  ) {}

  async inspect(storeKey: string): Promise<StoredLockState> {
    await this.ready();
    const row = await this.queries.held(keyHash(storeKey));
    return toState(storeKey, row);
  }

  /** Keyset pagination on the primary key: the cursor is the last key_hash of the page. */
  async list({ prefix, limit, cursor }: ListRequest): Promise<ListPage> {
    if (cursor !== undefined && !/^[0-9a-f]{64}$/.test(cursor))
      throw new InvalidLockArgumentError(`not a list() cursor of this backend: ${JSON.stringify(cursor.slice(0, 40))}`);
    await this.ready();
    const rows = await this.queries.page(`${prefix.replace(/[!%_]/g, (char) => `!${char}`)}%`, cursor ?? '', limit + 1);
    const page = rows.slice(0, limit);
    const locks = page.map((row) => toState(row.lockKey, row));
    return rows.length > limit ? { locks, cursor: page[page.length - 1].keyHash } : { locks };
  }

  async forceRelease(storeKey: string): Promise<StoredHolder[]> {
    await this.ready();
    const row = await this.queries.evict(keyHash(storeKey));
    return row ? [holderOf(row)] : [];
  }
}

function toState(storeKey: string, row: HeldRow | undefined): StoredLockState {
  return row ? { storeKey, mode: 'exclusive', holders: [holderOf(row)] } : { storeKey, holders: [] };
}

function holderOf(row: HeldRow): StoredHolder {
  return { owner: row.owner, fence: row.fence, expiresInMs: row.ttlMs };
}
