import type { IRangeResponse, IRequestOp } from 'etcd3';
import { isShared } from '../../engine/lock-mode.js';
import type { ClaimRequest } from '../../engine/lock-backend.js';
import { LockKeys, prefixEnd } from './etcd-keys.js';
import { EtcdQueueClaim, type EtcdContext } from './etcd-queue-claim.js';
import { waitForKeyChange } from './etcd-wait.js';

/** etcd's RangeRequest enums (SortOrder.Descend, SortTarget.Create), as numbers: the driver is imported for types only. */
const DESCEND = 2;
const BY_CREATE_REVISION = 2;

/** The key just ahead that this claim waits for, and the revision to watch it from. */
interface Ahead {
  readonly key: Buffer;
  readonly fromRevision: number;
}

/**
 * @internal
 * One acquisition on etcd, as etcd's own concurrency mutex does it: a key bound to the backend's
 * lease, put on the first attempt; the holder is the lowest create revision under the lock's
 * prefix (a reader: no write key below it); a waiter watches only the key just ahead of it.
 */
export class EtcdClaim extends EtcdQueueClaim<Ahead> {
  private readonly keys: LockKeys;

  constructor(context: EtcdContext, request: ClaimRequest) {
    const keys = new LockKeys(request.key);
    super(context, request, keys.claimKey(request.mode, request.owner));
    this.keys = keys;
  }

  /**
   * The last key ahead of `revision` (all keys, when this claim's put comes after the read) that
   * this claim must wait for: any claim for a writer, a write claim for a reader.
   */
  protected aheadQuery(revision: number | undefined): IRequestOp {
    const prefix = isShared(this.request.mode) ? this.keys.writePrefix : this.keys.prefix;
    return {
      request_range: {
        key: prefix,
        range_end: prefixEnd(prefix),
        sort_order: DESCEND,
        sort_target: BY_CREATE_REVISION,
        limit: 1,
        keys_only: true,
        ...(revision === undefined ? {} : { max_create_revision: revision - 1 }),
      },
    };
  }

  protected waitFrom(range: IRangeResponse, _revision: number, fromRevision: number): Ahead | undefined {
    const ahead = range.kvs[0];
    return ahead ? { key: ahead.key, fromRevision } : undefined;
  }

  protected watch(ahead: Ahead, maxMs: number, signal: AbortSignal): Promise<boolean> {
    return waitForKeyChange(this.context.client, ahead.key, ahead.fromRevision, maxMs, signal);
  }
}
