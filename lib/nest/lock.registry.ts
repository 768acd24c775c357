import { DistributedLockError } from '../errors.js';
import type { LockEngine } from '../engine/lock-engine.js';
import { Messages } from './lock.messages.js';

const AMBIGUOUS = Symbol('ambiguous');

interface Owner {
  readonly engine: LockEngine | typeof AMBIGUOUS;
  /** The instance's module can inject this engine (it imports the lock module, or the lock module is global). */
  readonly visible: boolean;
}

/**
 * How a `@Locked()` method finds its engine: each module, at init, records the engine of every
 * provider and controller instance of its application (a WeakMap, so nothing outlives its app).
 * Objects Nest did not create (request-scoped instances, `new Foo()`) fall back to the module
 * that serves the current HTTP request, then to the only running module.
 */
class LockRegistry {
  private readonly owners = new WeakMap<object, Owner>();
  private readonly running = new Set<LockEngine>();

  start(engine: LockEngine): void {
    this.running.add(engine);
  }

  stop(engine: LockEngine): void {
    this.running.delete(engine);
  }

  register(instance: object, engine: LockEngine, visible: boolean): void {
    const current = this.owners.get(instance);
    if (!current || (visible && !current.visible)) {
      this.owners.set(instance, { engine, visible });
    } else if (current.engine !== engine && visible === current.visible) {
      this.owners.set(instance, { engine: AMBIGUOUS, visible });
    }
  }

  /** The engine for a call on `self`; `fallback` is the engine of the HTTP request being handled, if any. */
  engineFor(self: unknown, where: string, fallback: LockEngine | undefined): LockEngine {
    const owner = (typeof self === 'object' || typeof self === 'function') && self !== null ? this.owners.get(self) : undefined;
    if (owner?.engine === AMBIGUOUS) throw new DistributedLockError(Messages.ambiguousProvider(where));
    if (owner) return owner.engine;
    if (fallback) return fallback;
    if (this.running.size === 1) return this.running.values().next().value as LockEngine;
    throw new DistributedLockError(this.running.size === 0 ? Messages.noModule(where) : Messages.ambiguousModule(where));
  }
}

/** @internal One per process: decorators are applied before any module exists. */
export const lockRegistry = new LockRegistry();
