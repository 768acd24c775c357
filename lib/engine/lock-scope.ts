import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lease, LeaseOwner } from './lease.js';
import type { Lock } from './lock.js';

/** A lock handle of the engine (single or multi-key): it can tell whether its holder released it. */
export interface ScopedLock extends Lock {
  readonly isReleased: boolean;
}

/**
 * One frame of an async call chain, innermost first: a lock it holds. Frames are immutable (each
 * `withLock`, `run` or `@Locked` call pushes one). One AsyncLocalStorage for the whole library,
 * because every store the process has is copied onto every promise it creates.
 */
export interface LockScope {
  readonly lease: Lease;
  readonly lock: ScopedLock;
  readonly parent: LockScope | undefined;
}

const storage = new AsyncLocalStorage<LockScope>();

/**
 * Scopes entered (`run()`) by handles not released yet. While there are none, the storage is
 * disabled: the frames left on async resources all belong to released handles, which every lookup
 * below passes over anyway, and on Node 20 (where an enabled AsyncLocalStorage has Node run its
 * hooks on every promise of the process) the rest of the process then pays nothing for it.
 */
let openScopes = 0;

/** @internal Scopes entered by handles not released yet (0: the storage is disabled). */
export function openScopeCount(): number {
  return openScopes;
}

/** @internal The scopes one handle entered (`run()`): they last until the handle is released. */
export class EnteredScopes {
  private count = 0;

  enter(): void {
    this.count++;
    openScopes++;
  }

  /** The handle is released: its scopes end. */
  end(): void {
    if (this.count === 0) return;
    openScopes -= this.count;
    this.count = 0;
    if (openScopes === 0) storage.disable();
  }
}

export function runInScope<T>(lease: Lease, lock: ScopedLock, fn: () => T): T {
  return storage.run({ lease, lock, parent: storage.getStore() }, fn);
}

/** Like `runInScope` for a lock on several keys: every part's lease is in scope (re-entrant), and `lock` is the current lock. */
export function runInScopes<T>(leases: readonly Lease[], lock: ScopedLock, fn: () => T): T {
  let scope = storage.getStore();
  for (const lease of leases) scope = { lease, lock, parent: scope };
  return storage.run(scope!, fn);
}

/** The innermost lock of this call chain that its holder has not released (a lost one still counts: its signal says so). */
export function currentLock(): Lock | undefined {
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    if (!scope.lock.isReleased) return scope.lock;
  }
  return undefined;
}

/** The frames of this call chain, as an identity: the same object for code in the same scope. */
export function currentScope(): LockScope | undefined {
  return storage.getStore();
}

/**
 * This call chain holds a lock of any store (in `withLock`, `run`, a `@Locked` method): it is work
 * already inside a lock, which a closing engine lets finish (see `LockEngine.close()`).
 */
export function holdsAnyLock(): boolean {
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    if (scope.lease.isHeld) return true;
  }
  return false;
}

/** The lease this call chain already holds on `storeKey` (its lock, or a permit of its semaphore) through `owner`'s engine, if any (re-entrancy). */
export function findHeldLease(storeKey: string, semaphore: boolean, owner: LeaseOwner): Lease | undefined {
  const matches = (lease: Lease) =>
    lease.storeKey === storeKey && (lease.permits !== undefined) === semaphore && lease.owner === owner && lease.isHeld;
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    if (matches(scope.lease)) return scope.lease;
  }
  return undefined;
}
