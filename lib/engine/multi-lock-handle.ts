import { LockLostError } from '../errors.js';
import type { Lease } from './lease.js';
import type { LockHandle } from './lock-handle.js';
import type { MultiLock } from './lock.js';
import { EnteredScopes } from './lock-scope.js';

/**
 * The holder's view of a lock on several keys: one handle over its parts (single-key handles, in
 * the canonical order they were taken). It is held while every part is: its signal aborts as soon
 * as any part is lost (or ends), and `release()` releases every part, last taken first.
 */
export class MultiLockHandle implements MultiLock {
  readonly key: string;
  readonly keys: readonly string[];
  readonly fences: Readonly<Record<string, number | undefined>>;
  /** Created on first use of `signal`, like a lease's. */
  private controller: AbortController | undefined;
  private endReason: unknown;
  private unwatch: (() => void) | undefined;
  private releasing: Promise<void> | undefined;
  private scopes: EnteredScopes | undefined;

  constructor(
    /** @internal At least two, with distinct keys, in canonical order. */
    readonly parts: readonly LockHandle[],
  ) {
    this.keys = Object.freeze(parts.map((part) => part.key));
    this.key = this.keys.join(',');
    this.fences = Object.freeze(Object.fromEntries(parts.map((part) => [part.key, part.fence])));
  }

  /** A multi-lock has no single fence: use `fences`. */
  get fence(): undefined {
    return undefined;
  }

  /** The earliest of the parts' expiries: the multi-lock is held no longer than its shortest part. */
  get expiresAt(): number {
    let earliest = Infinity;
    for (const part of this.parts) earliest = Math.min(earliest, part.expiresAt);
    return earliest;
  }

  /** `release()` was called. */
  get isReleased(): boolean {
    return this.releasing !== undefined;
  }

  /** @internal Every part's lease, for the async-context scope (re-entrancy). */
  get leases(): Lease[] {
    return this.parts.map((part) => part.lease);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.endReason !== undefined) this.controller.abort(this.endReason);
      else this.watchParts();
    }
    return this.controller.signal;
  }

  /** @internal Entering a scope (`run()`): it lasts until this handle is released. */
  enteredScope(): void {
    if (!this.isReleased) (this.scopes ??= new EnteredScopes()).enter();
  }

  /** Releases every part (last taken first), even when one fails; then rejects with a part's LockLostError, or a store error. */
  release(): Promise<void> {
    this.scopes?.end();
    this.releasing ??= this.releaseOnce();
    return this.releasing;
  }

  /** Extends every part to `leaseMs` (default: the lease each was acquired with); rejects with the first part's failure. */
  async extend(leaseMs?: number): Promise<void> {
    const results = await Promise.allSettled(this.parts.map((part) => part.extend(leaseMs)));
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }

  /** `await using lock = ...`: releases at the end of the block; a loss was already signalled, so it is not thrown again. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error;
    }
  }

  private async releaseOnce(): Promise<void> {
    // Our own release must not read as a part ending under us.
    this.unwatch?.();
    const errors: unknown[] = [];
    for (let i = this.parts.length - 1; i >= 0; i--) {
      await this.parts[i].release().catch((error: unknown) => errors.push(error));
    }
    const failure = errors.find((error) => error instanceof LockLostError) ?? errors[0];
    this.end(
      failure instanceof LockLostError ? failure : new DOMException(`Locks "${this.key}" were released`, 'AbortError'),
    );
    if (errors.length > 0) throw failure;
  }

  private watchParts(): void {
    const signals = this.parts.map((part) => part.signal);
    const ended = signals.find((signal) => signal.aborted);
    if (ended) return this.end(ended.reason);
    const onAbort = (event: Event) => this.end((event.target as AbortSignal).reason);
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
    // Listeners come off when this handle ends, so a long-held outer lock (re-entered by many multi-locks) does not collect them.
    this.unwatch = () => {
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
    };
  }

  private end(reason: unknown): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.endReason ??= reason;
    this.controller?.abort(this.endReason);
  }
}
