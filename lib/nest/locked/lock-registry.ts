import { DistributedLockError } from '../../errors.js';
import type { LockEngine } from '../../engine/lock-engine.js';
import { Messages } from '../lock-messages.js';

const AMBIGUOUS = Symbol('ambiguous');

interface Owner {
  readonly engine: LockEngine | typeof AMBIGUOUS;
  /** The instance's module can inject this engine (it imports the lock module, or the lock module is global). */
  readonly visible: boolean;
}

/**
 * How a `@Locked()` method finds the engine of its store: each store, at init, records its engine
 * for every provider and controller instance of its application (a WeakMap, so nothing outlives its
 * app), and for every request-scoped or transient class, whose instances Nest creates later. Other
 * objects (`new Foo()`) fall back to the only running store of that name.
 */
class LockRegistry {
  /** Per instance: store name → owner. */
  private readonly owners = new WeakMap<object, Map<string, Owner>>();
  /** Per request-scoped or transient class and store name: the engines of the apps that create its instances. */
  private readonly classOwners = new WeakMap<Function, Map<string, Owner[]>>();
  private readonly running = new Map<string, Set<LockEngine>>();
  /** Provider instances (not controllers) of running applications. */
  private readonly providers = new WeakSet<object>();

  start(store: string, engine: LockEngine): void {
    let engines = this.running.get(store);
    if (!engines) this.running.set(store, (engines = new Set()));
    engines.add(engine);
  }

  stop(store: string, engine: LockEngine): void {
    this.running.get(store)?.delete(engine);
  }

  register(instance: object, store: string, engine: LockEngine, visible: boolean, provider: boolean): void {
    if (provider) this.providers.add(instance);
    let byStore = this.owners.get(instance);
    if (!byStore) this.owners.set(instance, (byStore = new Map()));
    const current = byStore.get(store);
    if (!current || (visible && !current.visible)) {
      byStore.set(store, { engine, visible });
    } else if (current.engine !== engine && visible === current.visible) {
      byStore.set(store, { engine: AMBIGUOUS, visible });
    }
  }

  /** Records the engine for instances of a class that Nest creates per request or per consumer. */
  registerClass(type: Function, store: string, engine: LockEngine, visible: boolean): void {
    let byStore = this.classOwners.get(type);
    if (!byStore) this.classOwners.set(type, (byStore = new Map()));
    const owners = (byStore.get(store) ?? []).filter((owner) => this.isRunning(store, owner));
    const same = owners.find((owner) => owner.engine === engine);
    byStore.set(store, [
      ...owners.filter((owner) => owner !== same),
      { engine, visible: visible || same?.visible === true },
    ]);
  }

  /** `self` is a provider (a service, gateway, resolver...) that Nest created, not a controller. */
  isProvider(self: unknown): boolean {
    return typeof self === 'object' && self !== null && this.providers.has(self);
  }

  /** The engine of the store `store` for a call on `self`. */
  engineFor(self: unknown, where: string, store: string): LockEngine {
    const isObject = (typeof self === 'object' || typeof self === 'function') && self !== null;
    const owner = isObject ? this.owners.get(self)?.get(store) : undefined;
    if (owner?.engine === AMBIGUOUS) throw new DistributedLockError(Messages.ambiguousProvider(where, store));
    if (owner) return owner.engine;
    const byClass = isObject ? this.classEngine(self.constructor, store) : undefined;
    if (byClass) return byClass;
    const engines = this.running.get(store);
    if (engines?.size === 1) return engines.values().next().value as LockEngine;
    throw new DistributedLockError(
      engines?.size ? Messages.ambiguousModule(where, store) : Messages.noModule(where, store),
    );
  }

  private isRunning(store: string, owner: Owner): boolean {
    return this.running.get(store)?.has(owner.engine as LockEngine) === true;
  }

  /** The one running engine recorded for the class (preferring those its module can inject), if there is exactly one. */
  private classEngine(type: unknown, store: string): LockEngine | undefined {
    const owners =
      typeof type === 'function'
        ? this.classOwners
            .get(type)
            ?.get(store)
            ?.filter((owner) => this.isRunning(store, owner))
        : undefined;
    if (!owners?.length) return undefined;
    const preferred = owners.some((owner) => owner.visible) ? owners.filter((owner) => owner.visible) : owners;
    return preferred.length === 1 ? (preferred[0].engine as LockEngine) : undefined;
  }
}

/** @internal One per process: decorators are applied before any module exists. */
export const lockRegistry = new LockRegistry();
