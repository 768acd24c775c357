import { InvalidLockArgumentError } from '../errors.js';
import type { LockInspection, StoredHolder, StoredLockState, StoredWaiter } from './lock-inspection.js';
import { isBusyState } from './lock-inspection.js';
import { parseHolderIdentity } from './holder-identity.js';
import type { ForceReleaseOptions, ListLocksOptions, LockHolder, LockInfo, LockList, LockWaiter } from './lock-info.js';
import { assertKey, describe } from './lock-options.js';

/** Most locks one `list()` page may ask for. */
export const MAX_LIST_LIMIT = 1_000;
const DEFAULT_LIST_LIMIT = 100;
/** Longest `reason` kept in a `force-released` event. */
const MAX_REASON_LENGTH = 500;
/** Longest `actor` kept in a `force-released` event. */
const MAX_ACTOR_LENGTH = 200;

/**
 * The engine's side of inspection: checks arguments, adds and strips the key prefix, and reads the
 * holder's instance and label from the owner ids the store returns.
 */
export class LockInspector {
  constructor(
    private readonly backendName: string,
    private readonly inspection: LockInspection | undefined,
    private readonly keyPrefix: string,
  ) {}

  async inspect(key: string): Promise<LockInfo> {
    assertKey(key);
    return this.toInfo(await this.store().inspect(this.keyPrefix + key));
  }

  async list(options: ListLocksOptions = {}): Promise<LockList> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidLockArgumentError(`list options must be an object, got ${describe(options)}`);
    const { prefix = '', limit = DEFAULT_LIST_LIMIT, cursor } = options;
    if (typeof prefix !== 'string')
      throw new InvalidLockArgumentError(`prefix must be a string, got ${describe(prefix)}`);
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw new InvalidLockArgumentError(
        `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}, got ${describe(limit)}`,
      );
    }
    if (cursor !== undefined && (typeof cursor !== 'string' || cursor.length === 0))
      throw new InvalidLockArgumentError(`cursor must be a string from a previous page, got ${describe(cursor)}`);
    const page = await this.store().list({ prefix: this.keyPrefix + prefix, limit, cursor });
    const locks = page.locks
      .filter((state) => isBusyState(state) && state.storeKey.startsWith(this.keyPrefix))
      .map((state) => this.toInfo(state));
    return page.cursor === undefined ? { locks } : { locks, cursor: page.cursor };
  }

  /**
   * Frees the key whoever holds it; resolves the evicted holders (none: nobody held it). The key is
   * read first, so an evicted holder's fence is known even where the store's eviction does not
   * return it (Redis): a holder is matched by its owner id.
   */
  async forceRelease(
    key: string,
    options: ForceReleaseOptions = {},
  ): Promise<{ evicted: LockHolder[]; reason: string | undefined; actor: string | undefined }> {
    assertKey(key);
    if (typeof options !== 'object' || options === null)
      throw new InvalidLockArgumentError(`forceRelease options must be an object, got ${describe(options)}`);
    const { reason, actor } = options;
    if (reason !== undefined && typeof reason !== 'string')
      throw new InvalidLockArgumentError(`reason must be a string, got ${describe(reason)}`);
    if (actor !== undefined && typeof actor !== 'string')
      throw new InvalidLockArgumentError(`actor must be a string, got ${describe(actor)}`);
    const before = await this.store().inspect(this.keyPrefix + key);
    const evicted = withFences(await this.store().forceRelease(this.keyPrefix + key), before.holders);
    return {
      evicted: evicted.map(toHolder),
      reason: reason?.slice(0, MAX_REASON_LENGTH),
      actor: actor?.slice(0, MAX_ACTOR_LENGTH),
    };
  }

  private store(): LockInspection {
    if (!this.inspection)
      throw new InvalidLockArgumentError(
        `the ${this.backendName} backend cannot be inspected (it has no \`inspection\`)`,
      );
    return this.inspection;
  }

  private toInfo(state: StoredLockState): LockInfo {
    const holders = state.holders.map(toHolder);
    return {
      key: state.storeKey.slice(this.keyPrefix.length),
      held: holders.length > 0,
      ...(state.mode && holders.some((holder) => !holder.permit) ? { mode: state.mode } : {}),
      holders,
      ...(state.waiting === undefined ? {} : { waiting: state.waiting }),
      ...(state.waiters === undefined ? {} : { waiters: state.waiters.map(toWaiter) }),
      ...(state.semaphore ? { semaphore: state.semaphore } : {}),
    };
  }
}

/** The evicted holders, each with the fence the key had for its owner just before (when the eviction did not say). */
function withFences(evicted: readonly StoredHolder[], before: readonly StoredHolder[]): StoredHolder[] {
  return evicted.map((holder) => {
    if (holder.fence !== undefined || holder.owner === undefined) return holder;
    const seen = before.find(
      (other) => other.owner === holder.owner && other.permit === holder.permit && other.fence !== undefined,
    );
    return seen ? { ...holder, fence: seen.fence } : holder;
  });
}

function toHolder(stored: StoredHolder): LockHolder {
  const { claimedAt, ...identity } = parseHolderIdentity(stored.owner);
  const holder: { -readonly [K in keyof LockHolder]: LockHolder[K] } = identity;
  if (claimedAt !== undefined) holder.acquiredAt = claimedAt;
  if (stored.fence !== undefined) holder.fence = stored.fence;
  if (stored.expiresInMs !== undefined) holder.expiresInMs = Math.max(0, Math.round(stored.expiresInMs));
  if (stored.permit) holder.permit = true;
  return holder;
}

function toWaiter(stored: StoredWaiter): LockWaiter {
  const { claimedAt, ...identity } = parseHolderIdentity(stored.owner);
  return claimedAt === undefined ? identity : { ...identity, since: claimedAt };
}
