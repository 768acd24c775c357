import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { LockEngine } from '../engine/lock-engine.js';
import { OVERDUE, withinMs } from '../util/time-limit.js';
import { getLockEngineToken } from '../nest/store/lock-store-tokens.js';

/** The status of one check, in the shape `@nestjs/terminus` expects (`HealthIndicatorResult`). */
export interface LockHealthStatus {
  /** `'up'` when the store answered the ping in time. */
  status: 'up' | 'down';
  /** The store's name (`'redis'`, `'etcd'`, ...). */
  backend: string;
  /** The store's name: `'default'`, or the module's `name`. */
  store: string;
  /** Round-trip time of the ping, when it answered. */
  latencyMs?: number;
  /** Why the store is down, when it is. */
  message?: string;
  /** `false` for a backend without `ping()` (memory, or a custom backend): reported up without a round trip. */
  pinged?: boolean;
}

/** A terminus health result: the status under the key given to `isHealthy`. */
export type LockHealthResult<Key extends string = string> = Record<Key, LockHealthStatus>;

/** Options of `isHealthy` and `checkLockStore`. */
export interface LockHealthOptions {
  /** A ping slower than this counts as down. Default 2 000 ms. */
  timeoutMs?: number;
  /** The store to check: the `name` of a `DistributedLockModule.forRoot({ name })`. Default: the unnamed store. */
  store?: string;
}

const DEFAULT_TIMEOUT_MS = 2_000;

/**
 * A `@nestjs/terminus` health indicator for a lock store: it pings the store's backend (the
 * default store, or `{ store: name }`).
 * `@nestjs/terminus` stays an optional peer: this class needs nothing from it at run time and
 * returns the plain result object terminus (10.1+) reads, `down` included (nothing is thrown).
 *
 * ```ts
 * @Module({ imports: [TerminusModule], controllers: [HealthController], providers: [LockHealthIndicator] })
 * // in the controller:
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.locks.isHealthy('locks'), () => this.locks.isHealthy('critical-locks', { store: 'critical' })]); }
 * ```
 */
@Injectable()
export class LockHealthIndicator {
  constructor(private readonly moduleRef: ModuleRef) {}

  /** Pings the lock store; resolves `{ [key]: { status: 'up' | 'down', ... } }` and never rejects. */
  async isHealthy<const Key extends string = 'lock'>(
    key: Key = 'lock' as Key,
    options: LockHealthOptions = {},
  ): Promise<LockHealthResult<Key>> {
    let engine: LockEngine;
    try {
      engine = this.moduleRef.get<LockEngine>(getLockEngineToken(options.store), { strict: false });
    } catch (error) {
      const message = `no lock store named "${options.store}": ${error instanceof Error ? error.message : String(error)}`;
      return {
        [key]: { status: 'down', backend: 'unknown', store: options.store ?? 'default', message },
      } as LockHealthResult<Key>;
    }
    return { [key]: await checkLockStore(engine, options) } as LockHealthResult<Key>;
  }
}

/** The check behind {@link LockHealthIndicator}, usable without Nest. Never rejects. */
export async function checkLockStore(
  engine: Pick<LockEngine, 'backend' | 'name'>,
  options: Pick<LockHealthOptions, 'timeoutMs'> = {},
): Promise<LockHealthStatus> {
  const { backend, name: store } = engine;
  if (typeof backend.ping !== 'function') return { status: 'up', backend: backend.name, store, pinged: false };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const startedAt = performance.now();
  try {
    await withinMs(backend.ping(), timeoutMs);
    return {
      status: 'up',
      backend: backend.name,
      store,
      latencyMs: Math.round(performance.now() - startedAt),
      pinged: true,
    };
  } catch (error) {
    const message =
      error === OVERDUE ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error);
    return { status: 'down', backend: backend.name, store, message, pinged: true };
  }
}
