import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { LockEngine, LockTimeoutError, LockBackendError, MemoryBackend, type Lock } from '../../lib/index.js';
import { ScriptedBackend } from '../support/scripted-backend.js';

describe('waiting (memory backend, fake timers)', () => {
  let engine: LockEngine;

  beforeEach(() => {
    jest.useFakeTimers();
    engine = new LockEngine(new MemoryBackend(), { leaseMs: 10_000, waitMs: 5_000 });
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it("rejects with LockTimeoutError exactly after waitMs, with the holder's remaining lease as retryAfterMs", async () => {
    const held = await engine.acquire('k');
    let settled: unknown;
    engine.acquire('k').catch((error: unknown) => (settled = error));
    await jest.advanceTimersByTimeAsync(4_999);
    expect(settled).toBeUndefined();
    await jest.advanceTimersByTimeAsync(2);
    expect(settled).toBeInstanceOf(LockTimeoutError);
    // The holder renewed at 3.3 s for another 10 s: 8.3 s remain at the 5 s mark.
    expect((settled as LockTimeoutError).retryAfterMs).toBeGreaterThan(8_000);
    expect((settled as LockTimeoutError).retryAfterMs).toBeLessThanOrEqual(8_334);
    await held.release();
  });

  it('serves waiters in arrival order (FIFO)', async () => {
    const held = await engine.acquire('k');
    const order: number[] = [];
    const waiters = [1, 2, 3, 4].map((n) => engine.withLock('k', () => void order.push(n)));
    await jest.advanceTimersByTimeAsync(10);
    await held.release();
    await jest.advanceTimersByTimeAsync(10);
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it("wakes a waiter when the holder's lease lapses in the store (crashed holder), without any release", async () => {
    const backend = new ScriptedBackend();
    const waitingEngine = new LockEngine(backend.store, { leaseMs: 1_000, waitMs: 5_000 });
    const crashed = new LockEngine(backend, { leaseMs: 1_000 });
    await crashed.acquire('k');
    backend.renewBehaviour = 'hang'; // the holder is gone: it renews nothing
    let acquired: Lock | undefined;
    void waitingEngine.acquire('k').then((lock) => (acquired = lock));
    await jest.advanceTimersByTimeAsync(999);
    expect(acquired).toBeUndefined();
    await jest.advanceTimersByTimeAsync(5);
    expect(acquired).toBeDefined();
  });

  it('lets a waiting writer hold back readers that arrive after it (no writer starvation)', async () => {
    const reader = await engine.acquire('k', { mode: 'read' });
    const order: string[] = [];
    const writer = engine.withLock('k', () => void order.push('writer'), { mode: 'write' });
    await jest.advanceTimersByTimeAsync(1);
    const lateReader = engine.withLock('k', () => void order.push('late reader'), { mode: 'read' });
    await jest.advanceTimersByTimeAsync(1);
    expect(order).toEqual([]);
    await reader.release();
    await jest.advanceTimersByTimeAsync(1);
    await Promise.all([writer, lateReader]);
    expect(order).toEqual(['writer', 'late reader']);
  });

  it('reports a failing store as LockBackendError at once, not after waitMs', async () => {
    const backend = new ScriptedBackend();
    backend.acquireBehaviour = 'fail';
    const failing = new LockEngine(backend, { waitMs: 60_000 });
    await expect(failing.acquire('k')).rejects.toBeInstanceOf(LockBackendError);
  });
});

describe('LockTimeoutError.likelyFreeInMs: never shorter than the key is known to have been taken (memory backend, fake timers)', () => {
  let store: MemoryBackend;
  let here: LockEngine;
  let elsewhere: LockEngine;

  beforeEach(() => {
    jest.useFakeTimers();
    store = new MemoryBackend();
    here = new LockEngine(store, { leaseMs: 30_000, instance: 'here' });
    elsewhere = new LockEngine(store, { leaseMs: 30_000, instance: 'elsewhere' });
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  /** This instance's holds of `key` last `ms` each. */
  async function holdHere(key: string, ms: number, times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      const lock = await here.acquire(key);
      await jest.advanceTimersByTimeAsync(ms);
      await lock.release();
    }
  }

  async function timeoutOf(call: Promise<unknown>, advanceMs: number): Promise<LockTimeoutError> {
    const settled = call.then(
      () => undefined,
      (error: unknown) => error,
    );
    await jest.advanceTimersByTimeAsync(advanceMs);
    const error = await settled;
    expect(error).toBeInstanceOf(LockTimeoutError);
    return error as LockTimeoutError;
  }

  it("after a 10 s wait on a key another instance holds, says at least 10 s, not the median of this instance's 1 s holds", async () => {
    await holdHere('k', 1_000, 3);
    const holder = await elsewhere.acquire('k');
    const error = await timeoutOf(here.acquire('k', { waitMs: 10_000 }), 10_001);
    expect(error.likelyFreeInMs).toBe(10_000);
    await holder.release();
  });

  it("a one-shot attempt on a key held elsewhere: the median of this instance's holds (nothing else is known)", async () => {
    await holdHere('k', 1_000, 3);
    const holder = await elsewhere.acquire('k');
    await jest.advanceTimersByTimeAsync(14_000);
    expect((await timeoutOf(here.acquire('k', { waitMs: 0 }), 0)).likelyFreeInMs).toBe(1_000);
    await holder.release();
  });

  it("when this instance holds the key: the median less its hold's age while that is shorter, its age once it has run past the median", async () => {
    await holdHere('k', 10_000, 3);
    const holder = await here.acquire('k');
    await jest.advanceTimersByTimeAsync(2_000);
    expect((await timeoutOf(here.acquire('k', { waitMs: 0 }), 0)).likelyFreeInMs).toBe(8_000);
    await jest.advanceTimersByTimeAsync(12_000);
    expect((await timeoutOf(here.acquire('k', { waitMs: 0 }), 0)).likelyFreeInMs).toBe(14_000);
    await holder.release();
  });

  it('left out when this instance has not held the key recently, however long it waited', async () => {
    const holder = await elsewhere.acquire('k');
    expect((await timeoutOf(here.acquire('k', { waitMs: 10_000 }), 10_001)).likelyFreeInMs).toBeUndefined();
    await holder.release();
  });
});
