import type { Etcd3, IKeyValue } from 'etcd3';
import { InvalidLockArgumentError } from '../../errors.js';
import {
  MAX_REPORTED_WAITERS,
  type ListPage,
  type ListRequest,
  type LockInspection,
  type StoredHolder,
  type StoredLockState,
} from '../../engine/lock-inspection.js';
import { escapeSegment, LockKeys, prefixEnd, SemaphoreKeys } from './etcd-keys.js';

/** A claim's key: `<escaped key>/<read|write>/<escaped owner>` or `<escaped key>%sem/<escaped owner>`. */
const CLAIM_KEY = /^([^/]*?)(%sem\/[^/]*|\/(?:read|write)\/[^/]*)$/;
/** Keys one `list()` page reads at most per lock it may return. */
const KEYS_PER_LOCK = 8;

/**
 * @internal
 * Inspection of the etcd backend: a key's claims are its queue, ordered by create revision, so it
 * knows the holders (the first writer, or the readers before the first writer), their owner ids
 * (values) and fences (create revisions), and who waits, in create-revision order. A holder's
 * remaining lease is that of the backend's etcd lease its key is attached to (a lock lives as long
 * as that lease is kept alive), read once per distinct lease. It cannot know a semaphore's number
 * of permits: `semaphore.used` counts every claim under it, waiting ones included, and all show as
 * holders. `list` is one range read with a limit, then the keys found and their leases.
 */
export class EtcdInspection implements LockInspection {
  constructor(private readonly client: Etcd3) {}

  async inspect(storeKey: string): Promise<StoredLockState> {
    const [found] = await this.withLeases([await this.read(storeKey)]);
    return found;
  }

  /** A key's claims, with the lease each holder's key is attached to (to be read once per page). */
  private async read(storeKey: string): Promise<{ state: StoredLockState; leases: string[] }> {
    const [lock, semaphore] = await Promise.all([
      this.claims(new LockKeys(storeKey).prefix),
      this.claims(new SemaphoreKeys(storeKey).prefix),
    ]);
    const { holders, waiting, queued } = lockHolders(lock);
    const permits = semaphore.map((kv) => ({ ...holderOf(kv), permit: true }));
    const state: StoredLockState = {
      storeKey,
      ...(holders.length > 0
        ? { mode: holders[0].key.toString().includes('/read/') ? ('read' as const) : ('exclusive' as const) }
        : {}),
      holders: [...holders.map(holderOf), ...permits],
      waiting,
      waiters: queued.slice(0, MAX_REPORTED_WAITERS).map((kv) => ({ owner: kv.value.toString() })),
      ...(permits.length > 0 ? { semaphore: { used: permits.length } } : {}),
    };
    return { state, leases: [...holders, ...semaphore].map((kv) => String(kv.lease)) };
  }

  /**
   * Each holder's remaining lease: the TTL of the etcd lease its key is attached to (every claim of
   * one backend shares its lease), one `LeaseTimeToLive` per distinct lease of the page, in
   * parallel. etcd answers in whole seconds, rounded down (the lease ends within TTL + 1 s).
   */
  private async withLeases(found: readonly { state: StoredLockState; leases: string[] }[]): Promise<StoredLockState[]> {
    const ids = [...new Set(found.flatMap(({ leases }) => leases))].filter((id) => id !== '0');
    const ttls = new Map(
      await Promise.all(
        ids.map(async (id) => [id, Number((await this.client.leaseClient.leaseTimeToLive({ ID: id })).TTL)] as const),
      ),
    );
    return found.map(({ state, leases }) => ({
      ...state,
      holders: state.holders.map((holder, i) => {
        const ttl = ttls.get(leases[i]);
        return ttl === undefined || ttl < 0 ? holder : { ...holder, expiresInMs: ttl * 1000 };
      }),
    }));
  }

  /** One range read from `cursor` (an etcd key, base64url) over the escaped prefix; the locks found are then inspected. */
  async list({ prefix, limit, cursor }: ListRequest): Promise<ListPage> {
    const escapedPrefix = Buffer.from(escapeSegment(prefix));
    const start = cursor === undefined ? escapedPrefix : decodeCursor(cursor, escapedPrefix);
    const response = await this.client
      .getAll()
      .inRange({ start, end: prefixEnd(escapedPrefix) })
      .limit(limit * KEYS_PER_LOCK)
      .exec();
    const found: string[] = [];
    let next: Buffer | undefined;
    let lastGroup: Buffer | undefined;
    for (const kv of response.kvs) {
      const match = CLAIM_KEY.exec(kv.key.toString());
      if (!match) continue;
      const storeKey = unescapeSegment(match[1]);
      if (found[found.length - 1] !== storeKey && !found.includes(storeKey)) {
        if (found.length === limit) {
          next = kv.key;
          break;
        }
        found.push(storeKey);
      }
      lastGroup = Buffer.from(match[1] + (match[2].startsWith('%sem/') ? '%sem/' : `/${match[2].split('/')[1]}/`));
    }
    // The rest of the last group read is that lock's, which was inspected whole: skip it.
    if (next === undefined && response.more && lastGroup) next = prefixEnd(lastGroup);
    const locks = await this.withLeases(await Promise.all(found.map((storeKey) => this.read(storeKey))));
    return next === undefined ? { locks } : { locks, cursor: next.toString('base64url') };
  }

  /** Deletes the holders' keys (their renewals then fail) and every permit claim; waiters of the lock keep their places. */
  async forceRelease(storeKey: string): Promise<StoredHolder[]> {
    const [lock, semaphore] = await Promise.all([
      this.claims(new LockKeys(storeKey).prefix),
      this.claims(new SemaphoreKeys(storeKey).prefix),
    ]);
    const { holders } = lockHolders(lock);
    const evicted = [...holders, ...semaphore];
    await Promise.all(
      evicted.map((kv) =>
        this.client
          .if(kv.key, 'Create', '==', kv.create_revision)
          .then({ request_delete_range: { key: kv.key } })
          .commit(),
      ),
    );
    return [...holders.map(holderOf), ...semaphore.map((kv) => ({ ...holderOf(kv), permit: true }))];
  }

  /** Every claim under `prefix`, oldest first. */
  private async claims(prefix: Buffer): Promise<IKeyValue[]> {
    const response = await this.client.getAll().prefix(prefix).sort('Create', 'Ascend').exec();
    return response.kvs;
  }
}

function lockHolders(claims: readonly IKeyValue[]): { holders: IKeyValue[]; waiting: number; queued: IKeyValue[] } {
  const firstWriter = claims.findIndex((kv) => kv.key.toString().includes('/write/'));
  const holders =
    firstWriter === 0 ? claims.slice(0, 1) : claims.slice(0, firstWriter < 0 ? claims.length : firstWriter);
  return { holders, waiting: claims.length - holders.length, queued: claims.slice(holders.length) };
}

function holderOf(kv: IKeyValue): StoredHolder {
  return { owner: kv.value.toString(), fence: Number(kv.create_revision) };
}

/** Undoes escapeSegment (`%25`, `%2F`, `%uXXXX`). */
function unescapeSegment(escaped: string): string {
  return escaped.replace(/%u([0-9A-F]{4})|%25|%2F/g, (match, unit: string | undefined) =>
    unit ? String.fromCharCode(parseInt(unit, 16)) : match === '%25' ? '%' : '/',
  );
}

/** A cursor this backend handed out for `prefix`: an etcd key under the prefix, in base64url. */
function decodeCursor(cursor: string, prefix: Buffer): Buffer {
  const key = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url') : undefined;
  if (
    key === undefined ||
    key.toString('base64url') !== cursor ||
    key.length <= prefix.length ||
    !key.subarray(0, prefix.length).equals(prefix)
  ) {
    throw new InvalidLockArgumentError(
      `not a list() cursor of this backend for this prefix: ${JSON.stringify(cursor.slice(0, 40))}`,
    );
  }
  return key;
}
