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

  it('rejects with LockTimeoutError exactly after waitMs, with the holder\'s remaining lease as retryAfterMs', async () => {
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

  it('wakes a waiter when the holder\'s lease lapses in the store (crashed holder), without any release', async () => {
    const backend = new ScriptedBackend();
    const waitingEngine = new LockEngine(backend.store, { leaseMs: 1_000, waitMs: 5_000 });
    const crashed = new LockEngine(backend, { leaseMs: 1_000 });
    await crashed.acquire('k');
    backend.renewBehaviour = 'hang'; // the holder is gone: it renews nothing
    let acquired: Lock | undefined;
    waitingEngine.acquire('k').then((lock) => (acquired = lock));
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
