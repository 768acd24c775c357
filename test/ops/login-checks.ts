import { afterEach, beforeEach, expect } from '@jest/globals';
import {
  createLockBackend,
  LockBackendError,
  LockEngine,
  type BackendOptions,
  type Lock,
  type LockEngineOptions,
} from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { BusySpy } from '../support/observed-backend.js';
import { quietResources, settleResources, type ResourceCounts } from './open-resources.js';

/** Makes an engine over the credentials under test; `wrap` decorates its backend (for spying). */
export type EngineFactory = (wrap?: (backend: LockBackend) => LockBackend) => Promise<LockEngine>;

/**
 * Engines made by each test are closed after it, and the test fails if any socket or timer is
 * left open by then: closing an engine must close every client it made, even those still failing
 * to log in. Returns the function that makes them.
 */
export function useClosedEngines(
  settings: LockEngineOptions,
): (
  options: BackendOptions,
  wrap?: (backend: LockBackend) => LockBackend,
  overrides?: LockEngineOptions,
) => Promise<LockEngine> {
  let engines: LockEngine[] = [];
  let baseline: ResourceCounts;
  beforeEach(async () => {
    baseline = await quietResources();
  });
  afterEach(async () => {
    await Promise.all(engines.map((engine) => engine.close()));
    engines = [];
    expect(await settleResources(baseline)).toEqual(baseline);
  });
  return async (options, wrap = (backend) => backend, overrides = {}) => {
    const engine = new LockEngine(wrap(await createLockBackend(options)), { ...settings, ...overrides });
    engines.push(engine);
    return engine;
  };
}

/**
 * Two engines logged in with the same credentials: a lock is taken, a waiter on the second is
 * answered busy, and the release wakes it (pub/sub, watch: connections that must log in too) well
 * before the 30 s lease. Then the second backend's health ping answers.
 */
export async function expectHandOff(newEngine: EngineFactory): Promise<{ held: Lock; next: Lock }> {
  const spy = new BusySpy();
  const [a, b] = [await newEngine(), await newEngine((backend) => spy.wrap(backend))];
  const key = `k:${Math.random()}`;
  const held = await a.acquire(key, { leaseMs: 30_000 });
  const started = performance.now();
  const waiter = b.acquire(key, { waitMs: 5_000 });
  await spy.whenBusy(1);
  await held.release();
  const next = await waiter;
  expect(performance.now() - started).toBeLessThan(2_000);
  await next.release();
  await expect(b.backend.ping!()).resolves.toBeUndefined();
  return { held, next };
}

/** A refused login is LockBackendError (the store, not a busy lock), within `withinMs`, and `secret` is in no message of its cause chain. */
export async function expectLoginRefused(
  engine: LockEngine,
  refusal: { message: RegExp; withinMs: number; secret?: string },
): Promise<void> {
  const started = performance.now();
  const error = await engine.acquire('refused').catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(LockBackendError);
  expect((error as Error).message).toMatch(refusal.message);
  expect(performance.now() - started).toBeLessThan(refusal.withinMs);
  if (refusal.secret !== undefined) expect(causeChain(error).join('\n')).not.toContain(refusal.secret);
}

function causeChain(error: unknown): string[] {
  const list: string[] = [];
  for (let e = error as Error | undefined; e; e = e.cause as Error | undefined) list.push(`${e.name}: ${e.message}`);
  return list;
}
