import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lease, LeaseOwner } from './lease.js';
import type { Lock } from './lock.js';

/** The locks an async call chain holds, innermost first. Immutable: each `withLock` pushes a new scope. */
export interface LockScope {
  readonly lease: Lease;
  readonly lock: Lock;
  readonly parent: LockScope | undefined;
}

const storage = new AsyncLocalStorage<LockScope>();

export function currentScope(): LockScope | undefined {
  return storage.getStore();
}

export function runInScope<T>(lease: Lease, lock: Lock, fn: () => T): T {
  return storage.run({ lease, lock, parent: storage.getStore() }, fn);
}

/** Like `runInScope` for a lock on several keys: every part's lease is in scope (re-entrant), and `lock` is the current lock. */
export function runInScopes<T>(leases: readonly Lease[], lock: Lock, fn: () => T): T {
  let scope = storage.getStore();
  for (const lease of leases) scope = { lease, lock, parent: scope };
  return storage.run(scope!, fn);
}

/** The lease this call chain already holds on `storeKey` (its lock, or a permit of its semaphore) through `owner`'s engine, if any (re-entrancy). */
export function findHeldLease(storeKey: string, semaphore: boolean, owner: LeaseOwner): Lease | undefined {
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    const { lease } = scope;
    if (lease.storeKey === storeKey && (lease.permits !== undefined) === semaphore && lease.owner === owner && lease.isHeld) return lease;
  }
  return undefined;
}
