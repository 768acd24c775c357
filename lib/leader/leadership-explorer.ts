import type { OnApplicationBootstrap } from '@nestjs/common';
import type { DiscoveryService } from '@nestjs/core';
import type { LockEngine } from '../engine/lock-engine.js';
import { lockRegistry } from '../nest/locked/lock-registry.js';
import type { LeaderService } from './leader-service.js';
import type { Leadership } from './leadership.js';
import { leadershipMetadataOf } from './leadership-decorators.js';

type Task = (leadership: Leadership) => unknown;

/**
 * Starts, at application bootstrap, one campaign per leadership name that this store's
 * `@OnLeadership()` and `@LeaderOnly()` methods use (found on the application's provider instances,
 * like `@nestjs/schedule` finds `@Cron` jobs). The leader runs every `@OnLeadership()` method of the
 * name together; a name with only `@LeaderOnly()` methods is held until lost or shut down.
 */
export class LeadershipExplorer implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly storeName: string,
    private readonly engine: LockEngine,
    private readonly leaders: LeaderService,
  ) {}

  onApplicationBootstrap(): void {
    const tasks = new Map<string, Task[]>();
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null || seen.has(instance) || !wrapper.isDependencyTreeStatic())
        continue;
      seen.add(instance);
      for (const [methodName, method] of methodsOf(instance)) {
        for (const entry of leadershipMetadataOf(method)) {
          if (entry.store !== this.storeName || !this.serves(instance, `${instance.constructor.name}.${methodName}`))
            continue;
          const named = tasks.get(entry.name) ?? [];
          if (entry.kind === 'task') named.push((leadership) => (method as Task).call(instance, leadership));
          tasks.set(entry.name, named);
        }
      }
    }
    for (const [name, named] of tasks) {
      this.leaders.lead(name, (leadership) =>
        named.length > 0 ? Promise.all(named.map((task) => task(leadership))) : untilAborted(leadership.signal),
      );
    }
  }

  /** This store's engine is the one the instance's methods use (another app's store of the same name is not). */
  private serves(instance: object, where: string): boolean {
    try {
      return lockRegistry.engineFor(instance, where, this.storeName) === this.engine;
    } catch {
      return false;
    }
  }
}

/** Every method of the instance's class chain (own and inherited, nearest first), by name. */
function methodsOf(instance: object): Map<string, unknown> {
  const methods = new Map<string, unknown>();
  for (
    let proto = Object.getPrototypeOf(instance) as object | null;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || methods.has(name)) continue;
      const value: unknown = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (typeof value === 'function') methods.set(name, value);
    }
  }
  return methods;
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}
