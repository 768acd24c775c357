import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { LockEngine } from '../engine/lock-engine.js';
import { LOCK_ENGINE } from './lock.constants.js';
import { lockRegistry } from './lock.registry.js';

type Wrapper = ReturnType<DiscoveryService['getProviders']>[number];

/**
 * Tells `@Locked()` methods which engine serves them: records this module's engine for every
 * provider and controller instance of the application (for request-scoped and transient ones,
 * their class), preferring, when an application has more than one lock module, the one the
 * instance's own module can inject.
 */
@Injectable()
export class LockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(LOCK_ENGINE) private readonly engine: LockEngine,
  ) {}

  onModuleInit(): void {
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    const home = wrappers.find((wrapper) => wrapper.instance === this)?.host;
    for (const wrapper of wrappers) {
      const host = wrapper.host;
      const visible = home !== undefined && host !== undefined && (host === home || host.imports.has(home));
      for (const instance of instancesOf(wrapper)) lockRegistry.register(instance, this.engine, visible);
      // Request-scoped and transient instances are created after init, so their class stands for them.
      if (typeof wrapper.metatype === 'function' && !wrapper.isDependencyTreeStatic()) lockRegistry.registerClass(wrapper.metatype, this.engine, visible);
    }
  }
}

function instancesOf(wrapper: Wrapper): object[] {
  const candidates: unknown[] = [wrapper.instance];
  if (wrapper.isTransient) candidates.push(...wrapper.getStaticTransientInstances().map((entry) => entry?.instance));
  return candidates.filter((instance): instance is object => typeof instance === 'object' && instance !== null);
}
