import { randomUUID } from 'node:crypto';
import {
  createLockBackend,
  LockBackendError,
  LockEngine,
  type Lock,
  type LockEvent,
  type LockEngineOptions,
  type RedlockBackendOptions,
} from '../../lib/index.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import type { RedisMasters } from '../harness/redis-masters.js';

/** Engines over redlock backends (each with its own connections, as separate app instances), closed together. */
export class RedlockEngines {
  readonly keyPrefix = `redlock-test:${randomUUID().slice(0, 8)}:`;
  private readonly engines: LockEngine[] = [];

  constructor(private readonly masters: RedisMasters) {}

  async create(
    options: LockEngineOptions = {},
    tuning: Omit<RedlockBackendOptions, 'type' | 'urls' | 'clients'> = {},
  ): Promise<LockEngine> {
    const backend = await createLockBackend({ type: 'redlock', urls: this.masters.urls, ...tuning });
    const engine = new LockEngine(backend, { keyPrefix: this.keyPrefix, leaseMs: 5_000, waitMs: 5_000, ...options });
    this.engines.push(engine);
    return engine;
  }

  /** The Redis key that holds `key`'s lock on every master. */
  storeKey(key: string): string {
    return redisLockKeys(this.keyPrefix + key).lock;
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled(this.engines.splice(0).map((engine) => engine.close()));
  }
}

export const key = (name: string): string => `${name}:${randomUUID().slice(0, 8)}`;

/** Resolves with the engine's next event of `type` (and when it came, by the monotonic clock). */
export function nextEvent(engine: LockEngine, type: LockEvent['type']): Promise<{ event: LockEvent; at: number }> {
  return new Promise((resolve) => {
    const subscription = engine.events.subscribe((event) => {
      if (event.type !== type) return;
      subscription.unsubscribe();
      resolve({ event, at: performance.now() });
    });
  });
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T | undefined; error: unknown; ms: number }> {
  const started = performance.now();
  try {
    const value = await fn();
    return { value, error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { value: undefined, error, ms: performance.now() - started };
  }
}

/**
 * `lock.extend()`, again while it fails with LockBackendError: on a loaded machine a master may
 * miss the per-node timeout, and a renewal that hears too few masters cannot tell held from lost.
 */
export async function extendDecisively(lock: Lock, attempts = 10): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await lock.extend();
    } catch (error) {
      if (!(error instanceof LockBackendError) || attempt >= attempts) throw error;
    }
  }
}
