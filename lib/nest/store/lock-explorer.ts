import type { OnModuleInit } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { InvalidLockArgumentError } from '../../errors.js';
import { preloadContextException } from '../errors/lock-error-answers.js';
import { LockErrorsFilter } from '../errors/lock-errors-filter.js';
import { Messages } from '../lock-messages.js';
import type { HandlerKind } from '../nest-metadata.js';
import { lockRegistry } from '../locked/lock-registry.js';
import { prepareLockedMethod } from '../locked/locked-method.js';
import { LockStore } from './lock-store.js';

type Wrapper = ReturnType<DiscoveryService['getProviders']>[number];

/**
 * At bootstrap, for one store:
 * - tells `@Locked()` methods which engine serves their store: records this store's engine for
 *   every provider and controller instance of the application (for request-scoped and transient
 *   ones, their class), preferring, when an application has more than one store of a name, the one
 *   the instance's own module can inject; refuses two global stores of one name in one application;
 * - checks every `@Locked()` method of the application's classes (a key template naming a request
 *   part that no parameter carries fails here, saying what to add), so that no call finds it out;
 * - with `mapErrors: false`, tells the application's lock errors filter to leave errors thrown
 *   outside `@Locked()` handlers as they are.
 */
export class LockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly store: LockStore,
  ) {}

  async onModuleInit(): Promise<void> {
    const controllers = this.discovery.getControllers();
    const wrappers = [...this.discovery.getProviders(), ...controllers];
    const home = wrappers.find((wrapper) => wrapper.instance === this)?.host;
    // Two global stores of one name: injection would pick one silently, and every @Locked call would fail as ambiguous.
    const twin = wrappers.find(
      (wrapper) =>
        wrapper.instance instanceof LockStore &&
        wrapper.instance !== this.store &&
        wrapper.instance.name === this.store.name,
    );
    if (twin && home?.isGlobal && twin.host?.isGlobal)
      throw new InvalidLockArgumentError(Messages.duplicateStore(this.store.name));
    const { name, engine } = this.store;
    const kinds = new Set<HandlerKind>();
    for (const wrapper of wrappers) {
      const host = wrapper.host;
      const visible = home !== undefined && host !== undefined && (host === home || host.imports.has(home));
      const provider = !controllers.includes(wrapper);
      for (const instance of instancesOf(wrapper)) lockRegistry.register(instance, name, engine, visible, provider);
      // Request-scoped and transient instances are created after init, so their class stands for them.
      if (typeof wrapper.metatype === 'function' && !wrapper.isDependencyTreeStatic())
        lockRegistry.registerClass(wrapper.metatype, name, engine, visible);
      if (typeof wrapper.metatype === 'function')
        for (const kind of this.checkLockedMethods(wrapper.metatype)) kinds.add(kind);
      if (!this.store.mapErrors && wrapper.instance instanceof LockErrorsFilter) wrapper.instance.mapsErrors = false;
    }
    // So that the first busy answer of a microservice or gateway handler does not wait for an import.
    await Promise.all([...kinds].map(preloadContextException));
  }

  /** Plans every `@Locked()` method of `type` (its own and inherited ones); returns the contexts they handle. */
  private checkLockedMethods(type: Function): HandlerKind[] {
    const kinds: HandlerKind[] = [];
    const prototype = type.prototype as object | undefined;
    if (!prototype) return kinds;
    for (const method of this.scanner.getAllMethodNames(prototype)) {
      const kind = prepareLockedMethod((prototype as Record<string, unknown>)[method])?.kind;
      if (kind === 'rpc' || kind === 'ws') kinds.push(kind);
    }
    return kinds;
  }
}

function instancesOf(wrapper: Wrapper): object[] {
  const candidates: unknown[] = [wrapper.instance];
  if (wrapper.isTransient)
    candidates.push(
      ...(wrapper.getStaticTransientInstances() as ({ instance?: unknown } | undefined)[]).map(
        (entry) => entry?.instance,
      ),
    );
  return candidates.filter((instance): instance is object => typeof instance === 'object' && instance !== null);
}
