import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lease, LeaseOwner } from './lease.js';
import { LockHandle } from './lock-handle.js';
import type { Lock } from './lock.js';
import type { MultiLockHandle } from './multi-lock-handle.js';

/** A lock handle of the engine: it can tell whether its holder released it. */
export type ScopedLock = LockHandle | MultiLockHandle;

/**
 * One frame of an async call chain, innermost first: a lock it holds, or a mark another layer keeps
 * with this part of the chain (the Nest layer keeps the handler call it serves there), with the
 * locks the mark's owner keeps for all the code under it (a handler's locks, held until its
 * response is complete, for the handler and for the stream it returned). Frames are immutable (each
 * `withLock` or mark pushes one); `kept` is the mark owner's own list. One AsyncLocalStorage for
 * both, because every store the process has is copied onto every promise it creates.
 */
export interface LockScope {
  readonly lease?: Lease;
  readonly lock?: ScopedLock;
  readonly mark?: object;
  readonly kept?: readonly ScopedLock[];
  /** When the mark's call began (monotonic ms). */
  readonly since?: number;
  readonly parent: LockScope | undefined;
}

const storage = new AsyncLocalStorage<LockScope>();

export function runInScope<T>(lease: Lease, lock: ScopedLock, fn: () => T): T {
  return storage.run({ lease, lock, parent: storage.getStore() }, fn);
}

/** Like `runInScope` for a lock on several keys: every part's lease is in scope (re-entrant), and `lock` is the current lock. */
export function runInScopes<T>(leases: readonly Lease[], lock: ScopedLock, fn: () => T): T {
  let scope = storage.getStore();
  for (const lease of leases) scope = { lease, lock, parent: scope };
  return storage.run(scope!, fn);
}

/** Runs `fn` with `mark` kept in its call chain, for `findMark` to find from anywhere inside; the locks in `kept` count as that code's own. */
export function runMarked<T>(mark: object, kept: readonly ScopedLock[], fn: () => T): T {
  return storage.run({ mark, kept, since: performance.now(), parent: storage.getStore() }, fn);
}

/** This call chain is part of a marked call (a handler call Nest is answering) that began before `time` (monotonic ms). */
export function markedBefore(time: number): boolean {
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    if (scope.since !== undefined && scope.since < time) return true;
  }
  return false;
}

/** The innermost mark of this call chain that is a `type`, if any. */
export function findMark<M extends object>(type: abstract new (...args: never[]) => M): M | undefined {
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    if (scope.mark instanceof type) return scope.mark;
  }
  return undefined;
}

/** The innermost lock of this call chain that its holder has not released (a lost one still counts: its signal says so). */
export function currentLock(): Lock | undefined {
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    if (scope.lock && !scope.lock.isReleased) return scope.lock;
    for (let i = (scope.kept?.length ?? 0) - 1; i >= 0; i--) {
      if (!scope.kept![i]!.isReleased) return scope.kept![i];
    }
  }
  return undefined;
}

/** The frames of this call chain, as an identity: the same object for code in the same scope. */
export function currentScope(): LockScope | undefined {
  return storage.getStore();
}

/**
 * This call chain holds a lock of any store (in `withLock`, `run`, a `@Locked` method, or kept by a
 * handler call): it is work already inside a lock, which a closing engine lets finish (see `LockEngine.close()`).
 */
export function holdsAnyLock(): boolean {
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    if (scope.lease?.isHeld) return true;
    for (const lock of scope.kept ?? []) {
      if (lock instanceof LockHandle ? lock.lease.isHeld : lock.leases.some((lease) => lease.isHeld)) return true;
    }
  }
  return false;
}

/** The lease this call chain already holds on `storeKey` (its lock, or a permit of its semaphore) through `owner`'s engine, if any (re-entrancy). */
export function findHeldLease(storeKey: string, semaphore: boolean, owner: LeaseOwner): Lease | undefined {
  const matches = (lease: Lease) => lease.storeKey === storeKey && (lease.permits !== undefined) === semaphore && lease.owner === owner && lease.isHeld;
  for (let scope = storage.getStore(); scope; scope = scope.parent) {
    if (scope.lease && matches(scope.lease)) return scope.lease;
    for (const lock of scope.kept ?? []) {
      const found = lock instanceof LockHandle ? (matches(lock.lease) ? lock.lease : undefined) : lock.leases.find(matches);
      if (found) return found;
    }
  }
  return undefined;
}
