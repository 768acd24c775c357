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
 * provider and controller instance of its application (a WeakMap, so nothing outlives its app),
 * and of every request-scoped or transient class, whose instances Nest creates later. Other
 * objects (`new Foo()`) fall back to the only running module.
 */
class LockRegistry {
  private readonly owners = new WeakMap<object, Owner>();
  /** Per request-scoped or transient class: the engines of the apps that create its instances. */
  private readonly classOwners = new WeakMap<Function, Owner[]>();
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

  /** Records the engine for instances of a class that Nest creates per request or per consumer. */
  registerClass(type: Function, engine: LockEngine, visible: boolean): void {
    const owners = (this.classOwners.get(type) ?? []).filter((owner) => this.running.has(owner.engine as LockEngine));
    const same = owners.find((owner) => owner.engine === engine);
    this.classOwners.set(type, [...owners.filter((owner) => owner !== same), { engine, visible: visible || same?.visible === true }]);
  }

  /** The engine for a call on `self`. */
  engineFor(self: unknown, where: string): LockEngine {
    const isObject = (typeof self === 'object' || typeof self === 'function') && self !== null;
    const owner = isObject ? this.owners.get(self) : undefined;
    if (owner?.engine === AMBIGUOUS) throw new DistributedLockError(Messages.ambiguousProvider(where));
    if (owner) return owner.engine;
    const byClass = isObject ? this.classEngine(self.constructor) : undefined;
    if (byClass) return byClass;
    if (this.running.size === 1) return this.running.values().next().value as LockEngine;
    throw new DistributedLockError(this.running.size === 0 ? Messages.noModule(where) : Messages.ambiguousModule(where));
  }

  /** The one running engine recorded for the class (preferring those its module can inject), if there is exactly one. */
  private classEngine(type: unknown): LockEngine | undefined {
    const owners = typeof type === 'function' ? this.classOwners.get(type)?.filter((owner) => this.running.has(owner.engine as LockEngine)) : undefined;
    if (!owners?.length) return undefined;
    const preferred = owners.some((owner) => owner.visible) ? owners.filter((owner) => owner.visible) : owners;
    return preferred.length === 1 ? (preferred[0].engine as LockEngine) : undefined;
  }
}

/** @internal One per process: decorators are applied before any module exists. */
export const lockRegistry = new LockRegistry();
