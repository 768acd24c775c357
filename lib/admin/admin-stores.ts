import { NotFoundException } from '@nestjs/common';
import type { DiscoveryService } from '@nestjs/core';
import { LockService } from '../nest/lock-service.js';
import { AdminEventLog } from './admin-event-log.js';

/** One store the page can show: its `LockService` and this instance's recent events of it. */
interface AdminStore {
  readonly locks: LockService;
  readonly log: AdminEventLog;
}

/**
 * The lock stores of the application, by name, as the page offers them (`?store=`): the one the
 * module was registered with first, then every other `LockService` among the app's providers
 * (`DistributedLockModule.forRoot({ name })`). Found once, after the app's providers exist.
 */
export class AdminStores {
  private found: Map<string, AdminStore> | undefined;

  constructor(
    private readonly first: LockService,
    private readonly discovery: DiscoveryService,
  ) {}

  /** The store names, the first one first. */
  names(): string[] {
    return [...this.all().keys()];
  }

  /** The store `name` (the first one without a name); 404 for a name the app does not have. */
  get(name: string | undefined): AdminStore {
    const stores = this.all();
    const store = name === undefined || name === '' ? stores.values().next().value : stores.get(name);
    if (!store)
      throw new NotFoundException(
        `No lock store named ${JSON.stringify(name)} (stores: ${[...stores.keys()].join(', ')})`,
      );
    return store;
  }

  /** Stops recording events. */
  close(): void {
    for (const store of this.found?.values() ?? []) store.log.close();
  }

  private all(): Map<string, AdminStore> {
    if (!this.found) {
      const services = [
        this.first,
        ...this.discovery
          .getProviders()
          .map((wrapper) => wrapper.instance as unknown)
          .filter((instance): instance is LockService => instance instanceof LockService),
      ];
      this.found = new Map();
      for (const locks of services) {
        if (!this.found.has(locks.name)) this.found.set(locks.name, { locks, log: new AdminEventLog(locks.events) });
      }
    }
    return this.found;
  }
}
