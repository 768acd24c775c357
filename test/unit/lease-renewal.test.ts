import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { LockEngine, LockBackendError, LockLostError, type LockEvent } from '../../lib/index.js';
import { ScriptedBackend } from '../support/scripted-backend.js';

describe('lease renewal and the local lease clock (fake timers)', () => {
  let backend: ScriptedBackend;
  let engine: LockEngine;
  let events: LockEvent[];

  beforeEach(() => {
    jest.useFakeTimers();
    backend = new ScriptedBackend();
    engine = new LockEngine(backend, { leaseMs: 3000, waitMs: 0 });
    events = [];
    engine.events.subscribe((event) => events.push(event));
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('renews every leaseMs/3 while held, and stops after release', async () => {
    const lock = await engine.acquire('k');
    await jest.advanceTimersByTimeAsync(999);
    expect(backend.calls.renew).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(backend.calls.renew).toBe(1);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(backend.calls.renew).toBe(11);
    expect(lock.signal.aborted).toBe(false);
    expect(events.filter((event) => event.type === 'extended')).toHaveLength(11);
    await lock.release();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(backend.calls.renew).toBe(11);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('aborts the signal at the lease deadline when renewals hang, even though no answer came back', async () => {
    const lock = await engine.acquire('k');
    backend.renewBehaviour = 'hang';
    await jest.advanceTimersByTimeAsync(2999);
    expect(lock.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(2);
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(events.map((event) => event.type)).toContain('lost');
  });

  it("aborts with LockLostError when the store says the lock is no longer this owner's", async () => {
    const lock = await engine.acquire('k');
    backend.renewBehaviour = 'lost';
    await jest.advanceTimersByTimeAsync(1000);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect((lock.signal.reason as Error).message).toMatch(/no longer holds it/);
    await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
  });

  it('rides out failed renewals (extend-failed events, earlier retries) and keeps the lock if one succeeds in time', async () => {
    const lock = await engine.acquire('k');
    backend.renewBehaviour = 'fail';
    await jest.advanceTimersByTimeAsync(1000);
    expect(events.filter((event) => event.type === 'extend-failed')).toHaveLength(1);
    // The retry comes before the next regular tick: half the remaining lease (1000 ms), not lease/3 later.
    await jest.advanceTimersByTimeAsync(1000);
    expect(backend.calls.renew).toBe(2);
    backend.renewBehaviour = 'ok';
    await jest.advanceTimersByTimeAsync(600);
    expect(lock.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(lock.signal.aborted).toBe(false);
    await lock.release();
  });

  it('loses the lock when every renewal fails until the lease lapses', async () => {
    const lock = await engine.acquire('k');
    backend.renewBehaviour = 'fail';
    await jest.advanceTimersByTimeAsync(3001);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
  });

  it('explicit extend() surfaces a store failure as LockBackendError but keeps the lock until it lapses', async () => {
    const lock = await engine.acquire('k');
    backend.renewBehaviour = 'fail';
    await expect(lock.extend()).rejects.toBeInstanceOf(LockBackendError);
    expect(lock.signal.aborted).toBe(false);
  });

  it('treats a grant whose validity is already spent as not acquired and tries again', async () => {
    backend.validityMs = 0;
    const attempt = engine.acquire('k', { waitMs: 50 });
    const failure = expect(attempt).rejects.toThrow();
    await jest.advanceTimersByTimeAsync(100);
    await failure;
    expect(backend.calls.tryAcquire).toBeGreaterThan(1);
    expect(backend.calls.release).toBeGreaterThan(0);
  });

  it('never throws from a timer: a failing background release after a loss leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const lock = await engine.acquire('k');
    backend.renewBehaviour = 'lost';
    backend.releaseBehaviour = 'fail';
    await jest.advanceTimersByTimeAsync(1000);
    expect(lock.signal.aborted).toBe(true);
    jest.useRealTimers();
    await new Promise((resolve) => setTimeout(resolve, 10));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });
});
