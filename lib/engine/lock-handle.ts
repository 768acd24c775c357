import { LockLostError } from '../errors.js';
import { checkLeaseMs } from './lock-options.js';
import type { Lease } from './lease.js';
import type { Lock } from './lock.js';
import { EnteredScopes } from './lock-scope.js';

/**
 * The holder's view of a lease. The outermost handle releases the lease; a re-entrant handle
 * (same call chain, same key) shares the lease and its fence, and its release only ends its own use.
 */
export class LockHandle implements Lock {
  private released = false;
  private scopes: EnteredScopes | undefined;

  constructor(
    /** @internal */
    readonly lease: Lease,
    private readonly reentrant: boolean,
    private readonly defaultLeaseMs: number,
  ) {}

  get key(): string {
    return this.lease.key;
  }

  get fence(): number | undefined {
    return this.lease.fence;
  }

  get signal(): AbortSignal {
    return this.lease.signal;
  }

  get expiresAt(): number {
    return this.lease.expiresAt;
  }

  /** This handle was released (a re-entrant one: its own use ended, the lease may still be held). */
  get isReleased(): boolean {
    return this.released || this.lease.isReleased;
  }

  /** @internal Entering a scope (`run()`): it lasts until this handle is released. */
  enteredScope(): void {
    if (!this.isReleased) (this.scopes ??= new EnteredScopes()).enter();
  }

  release(): Promise<void> {
    this.scopes?.end();
    if (!this.reentrant) {
      this.released = true;
      // The lease's own promise, not one more wrapped around it: this is every lock's release.
      return this.lease.release();
    }
    return this.endReentrantUse();
  }

  private async endReentrantUse(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.lease.isLost) throw this.lease.signal.reason as LockLostError;
  }

  async extend(leaseMs?: number): Promise<void> {
    return this.lease.extend(leaseMs === undefined ? this.defaultLeaseMs : checkLeaseMs(leaseMs));
  }

  /** `await using lock = ...`: releases at the end of the block; a loss was already signalled, so it is not thrown again. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error;
    }
  }
}
