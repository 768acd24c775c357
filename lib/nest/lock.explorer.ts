import type { OnModuleInit } from '@nestjs/common';
import type { DiscoveryService } from '@nestjs/core';
import { InvalidLockArgumentError } from '../errors.js';
import { Messages } from './lock.messages.js';
import { lockRegistry } from './lock.registry.js';
import { LockStore } from './lock-store.js';

type Wrapper = ReturnType<DiscoveryService['getProviders']>[number];

/**
 * Tells `@Locked()` methods which engine serves their store: records this store's engine for every
 * provider and controller instance of the application (for request-scoped and transient ones,
 * their class), preferring, when an application has more than one store of a name, the one the
 * instance's own module can inject. Refuses two global stores of one name in one application.
 */
export class LockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly store: LockStore,
  ) {}

  onModuleInit(): void {
    const controllers = this.discovery.getControllers();
    const wrappers = [...this.discovery.getProviders(), ...controllers];
    const home = wrappers.find((wrapper) => wrapper.instance === this)?.host;
    // Two global stores of one name: injection would pick one silently, and every @Locked call would fail as ambiguous.
    const twin = wrappers.find((wrapper) => wrapper.instance instanceof LockStore && wrapper.instance !== this.store && wrapper.instance.name === this.store.name);
    if (twin && home?.isGlobal && twin.host?.isGlobal) throw new InvalidLockArgumentError(Messages.duplicateStore(this.store.name));
    const { name, engine } = this.store;
    for (const wrapper of wrappers) {
      const host = wrapper.host;
      const visible = home !== undefined && host !== undefined && (host === home || host.imports.has(home));
      const provider = !controllers.includes(wrapper);
      for (const instance of instancesOf(wrapper)) lockRegistry.register(instance, name, engine, visible, provider);
      // Request-scoped and transient instances are created after init, so their class stands for them.
      if (typeof wrapper.metatype === 'function' && !wrapper.isDependencyTreeStatic()) lockRegistry.registerClass(wrapper.metatype, name, engine, visible);
    }
  }
}

function instancesOf(wrapper: Wrapper): object[] {
  const candidates: unknown[] = [wrapper.instance];
  if (wrapper.isTransient) candidates.push(...wrapper.getStaticTransientInstances().map((entry) => entry?.instance));
  return candidates.filter((instance): instance is object => typeof instance === 'object' && instance !== null);
}
