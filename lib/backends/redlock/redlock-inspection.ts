import { InvalidLockArgumentError, LockBackendError } from '../../errors.js';
import type {
  ListPage,
  ListRequest,
  LockInspection,
  StoredHolder,
  StoredLockState,
} from '../../engine/lock-inspection.js';
import { RedisInspection } from '../redis/redis-inspection.js';
import { isReachable, type RedlockMaster } from './redlock-masters.js';

/**
 * Inspection of the redlock backend: each master is read like a single Redis (redis-inspection.ts),
 * and a holder is an owner that a quorum of the masters that answered hold the key for, with the
 * shortest remaining lease among them. It cannot know fences (redlock has none) nor waiters (they
 * retry with jitter and keep no place). Force release deletes the key on every reachable master.
 */
export class RedlockInspection implements LockInspection {
  private readonly perMaster: readonly RedisInspection[];

  constructor(
    private readonly masters: readonly RedlockMaster[],
    private readonly quorum: number,
  ) {
    this.perMaster = masters.map((master) => new RedisInspection(master.client));
  }

  async inspect(storeKey: string): Promise<StoredLockState> {
    return this.combine(storeKey, await this.onEveryMaster((inspection) => inspection.inspect(storeKey)));
  }

  /**
   * Scans the first `masters - quorum + 1` masters in turn (every quorum-held key is on one of
   * them); a key is listed from the last of them that has it. Cursor: `<master>:<its cursor>`.
   * Last, not first: an acquisition's write can still land on a master after the round reached
   * its quorum, so a key can appear on a master already scanned (and would then be listed by
   * none), but a held key never leaves a master it is on. At worst a key acquired during the
   * listing shows up twice.
   */
  async list({ prefix, limit, cursor }: ListRequest): Promise<ListPage> {
    let { master, inner } = decodeCursor(cursor, this.masters.length);
    const scanned = this.masters.length - this.quorum + 1;
    const locks: StoredLockState[] = [];
    for (;;) {
      const page = await this.perMaster[master].list({ prefix, limit: limit - locks.length, cursor: inner });
      for (const found of page.locks) {
        if ((await this.lastHolding(found.storeKey, scanned)) === master)
          locks.push(await this.inspect(found.storeKey));
      }
      if (page.cursor !== undefined) return { locks, cursor: `${master}:${page.cursor}` };
      if (master + 1 >= scanned) return { locks };
      // This master is done: go on with the next one, in this page while there is room.
      master++;
      inner = undefined;
      if (locks.length >= limit) return { locks, cursor: `${master}:` };
    }
  }

  async forceRelease(storeKey: string): Promise<StoredHolder[]> {
    const evicted = await this.onEveryMaster((inspection) => inspection.forceRelease(storeKey));
    const owners = new Set(
      evicted
        .flatMap((holders) => holders ?? [])
        .filter((holder) => !holder.permit)
        .map((holder) => holder.owner!),
    );
    return [...owners].map((owner) => ({ owner }));
  }

  private combine(storeKey: string, states: readonly (StoredLockState | undefined)[]): StoredLockState {
    const seen = new Map<string, { count: number; expiresInMs: number }>();
    for (const state of states) {
      for (const holder of state?.holders ?? []) {
        if (holder.permit || holder.owner === undefined) continue;
        const entry = seen.get(holder.owner) ?? { count: 0, expiresInMs: Infinity };
        entry.count++;
        entry.expiresInMs = Math.min(entry.expiresInMs, holder.expiresInMs ?? Infinity);
        seen.set(holder.owner, entry);
      }
    }
    const holders = [...seen]
      .filter(([, entry]) => entry.count >= this.quorum)
      .map(([owner, entry]) => ({
        owner,
        ...(Number.isFinite(entry.expiresInMs) ? { expiresInMs: entry.expiresInMs } : {}),
      }));
    return { storeKey, ...(holders.length > 0 ? { mode: 'exclusive' as const } : {}), holders };
  }

  /** The index of the last of the first `count` masters on which someone holds `storeKey` (one that does not answer counts as not holding it). */
  private async lastHolding(storeKey: string, count: number): Promise<number | undefined> {
    for (let i = count - 1; i >= 0; i--) {
      if (!isReachable(this.masters[i])) continue;
      const state = await this.perMaster[i].inspect(storeKey).catch(() => undefined);
      if (state && state.holders.some((holder) => !holder.permit)) return i;
    }
    return undefined;
  }

  /** Runs `read` on every reachable master; rejects unless a quorum answered. A master that failed reads as `undefined`. */
  private async onEveryMaster<T>(read: (inspection: RedisInspection) => Promise<T>): Promise<(T | undefined)[]> {
    const settled = await Promise.allSettled(
      this.masters.map((master, i) =>
        isReachable(master) ? read(this.perMaster[i]) : Promise.reject(new Error('not connected')),
      ),
    );
    const answered = settled.filter((result) => result.status === 'fulfilled').length;
    if (answered < this.quorum)
      throw new LockBackendError(
        'redlock',
        `inspection: ${answered} of ${this.masters.length} masters answered, ${this.quorum} needed`,
      );
    return settled.map((result) => (result.status === 'fulfilled' ? result.value : undefined));
  }
}

function decodeCursor(cursor: string | undefined, masters: number): { master: number; inner: string | undefined } {
  if (cursor === undefined) return { master: 0, inner: undefined };
  const match = /^(\d+):(.*)$/.exec(cursor);
  if (!match || Number(match[1]) >= masters)
    throw new InvalidLockArgumentError(`not a list() cursor of this backend: ${JSON.stringify(cursor.slice(0, 40))}`);
  return { master: Number(match[1]), inner: match[2] === '' ? undefined : match[2] };
}
