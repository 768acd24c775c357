import type { IRangeResponse, IRequestOp } from 'etcd3';
import type { ClaimRequest } from '../../engine/lock-backend.js';
import { prefixEnd, SemaphoreKeys } from './etcd-keys.js';
import { EtcdQueueClaim, type EtcdContext } from './etcd-queue-claim.js';
import { waitForDeletionsAhead } from './etcd-wait.js';

/** How many keys ahead must go before this claim holds a permit, as of a read. */
interface Short {
  readonly revision: number;
  readonly deletionsNeeded: number;
  readonly fromRevision: number;
}

/**
 * @internal
 * One permit of a counting semaphore on etcd: a key bound to the backend's lease under the key's
 * semaphore prefix (apart from its lock). The claim holds a permit while fewer than `permits` keys
 * under that prefix have a lower create revision, so permits go in arrival order. A waiter counts
 * the deletions of the keys ahead of it (one watch on the prefix, deletions only) and wakes when
 * enough are gone: only the claim a release lets in tries again.
 */
export class EtcdSemaphoreClaim extends EtcdQueueClaim<Short> {
  private readonly prefix: Buffer;
  private readonly permits: number;

  constructor(context: EtcdContext, request: ClaimRequest) {
    const keys = new SemaphoreKeys(request.key);
    super(context, request, keys.permitKey(request.owner));
    this.prefix = keys.prefix;
    this.permits = request.permits ?? 1;
  }

  /**
   * The permit keys ahead of `revision` (all of them, when this claim's put comes after the read),
   * names only. Not `count_only`: etcd counts a range before it applies `max_create_revision`.
   */
  protected aheadQuery(revision: number | undefined): IRequestOp {
    return {
      request_range: {
        key: this.prefix,
        range_end: prefixEnd(this.prefix),
        keys_only: true,
        ...(revision === undefined ? {} : { max_create_revision: revision - 1 }),
      },
    };
  }

  protected waitFrom(range: IRangeResponse, revision: number, fromRevision: number): Short | undefined {
    const ahead = range.kvs.length;
    return ahead < this.permits ? undefined : { revision, deletionsNeeded: ahead - this.permits + 1, fromRevision };
  }

  protected watch(short: Short, maxMs: number, signal: AbortSignal): Promise<boolean> {
    return waitForDeletionsAhead(
      this.context.client,
      this.prefix,
      short.revision,
      short.deletionsNeeded,
      short.fromRevision,
      maxMs,
      signal,
    );
  }
}
