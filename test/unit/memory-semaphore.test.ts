import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import {
  InvalidLockArgumentError,
  LockEngine,
  LockLostError,
  LockTimeoutError,
  MemoryBackend,
  type Lock,
} from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';

const request = (owner: string, leaseMs: number, permits = 2) => ({
  key: 'lock:k',
  owner,
  leaseMs,
  mode: 'exclusive' as const,
  fair: false,
  permits,
  onLost: () => undefined,
});

describe('memory semaphore (fake timers)', () => {
  let backend: MemoryBackend;
  let engine: LockEngine;

  beforeEach(() => {
    jest.useFakeTimers();
    backend = new MemoryBackend();
    engine = new LockEngine(backend, { leaseMs: 3_000, waitMs: 5_000 });
  });

  afterEach(async () => {
    await engine.close();
    expect(jest.getTimerCount()).toBe(0);
    jest.useRealTimers();
  });

  it('serves waiters in arrival order as permits are released', async () => {
    const held = [await engine.semaphore('k', 2), await engine.semaphore('k', 2)];
    const order: number[] = [];
    const waiters = [1, 2, 3].map((n) => engine.semaphore('k', 2).then((lock) => (order.push(n), lock)));
    await jest.advanceTimersByTimeAsync(10);
    expect(order).toEqual([]);
    await held[1].release();
    await jest.advanceTimersByTimeAsync(0);
    expect(order).toEqual([1]);
    await held[0].release();
    await jest.advanceTimersByTimeAsync(0);
    expect(order).toEqual([1, 2]);
    await (await waiters[0]).release();
    await jest.advanceTimersByTimeAsync(0);
    expect(order).toEqual([1, 2, 3]);
    await Promise.all((await Promise.all(waiters.slice(1))).map((lock) => lock.release()));
  });

  it('frees the permit of a holder that stopped renewing exactly when its lease lapses, and wakes the waiter then', async () => {
    const crashed = backend.claim(request('crashed', 1_000));
    await crashed.tryAcquire();
    await engine.semaphore('k', 2);
    let next: Lock | undefined;
    void engine.semaphore('k', 2).then((lock) => (next = lock));
    await jest.advanceTimersByTimeAsync(999);
    expect(next).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(next).toBeDefined();
    // The crashed holder learns it at its next renewal; its release does not free anyone else's permit.
    expect(await crashed.renew(1_000)).toBe(false);
    expect(await crashed.release()).toBe(false);
    expect(await engine.tryAcquire('k', { permits: 2 })).toBeNull();
  });

  it('keeps renewed permits far past the lease, and times out a waiter after waitMs with the earliest expiry as retryAfterMs', async () => {
    const held = [await engine.semaphore('k', 2), await engine.semaphore('k', 2)];
    await jest.advanceTimersByTimeAsync(20_000);
    expect(held.every((lock) => !lock.signal.aborted)).toBe(true);
    let settled: unknown;
    engine.semaphore('k', 2).catch((error: unknown) => (settled = error));
    await jest.advanceTimersByTimeAsync(4_999);
    expect(settled).toBeUndefined();
    await jest.advanceTimersByTimeAsync(2);
    expect(settled).toBeInstanceOf(LockTimeoutError);
    expect((settled as LockTimeoutError).retryAfterMs).toBeGreaterThan(0);
    expect((settled as LockTimeoutError).retryAfterMs).toBeLessThanOrEqual(3_000);
  });

  it('aborts a holder whose permit the store dropped, at its next renewal', async () => {
    const lock = await engine.semaphore('k', 1);
    backend.expireSemaphore('lock:k');
    expect(lock.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
  });

  it('checks each claim against its own permits: a caller that asks for more gets in where one that asks for fewer waits', async () => {
    await engine.semaphore('k', 2);
    await engine.semaphore('k', 2);
    expect(await engine.tryAcquire('k', { permits: 2 })).toBeNull();
    const more = await engine.tryAcquire('k', { permits: 3 });
    expect(more).not.toBeNull();
  });

  it('keeps semaphores apart from locks: the same key holds both, and expire() of the lock leaves the permits', async () => {
    const lock = await engine.acquire('k');
    const permit = await engine.semaphore('k', 1, { waitMs: 0 });
    backend.expire('lock:k');
    await jest.advanceTimersByTimeAsync(1_000);
    expect(lock.signal.aborted).toBe(true);
    expect(permit.signal.aborted).toBe(false);
  });

  it('is refused with InvalidLockArgumentError by a backend that does not declare semaphores', async () => {
    const plain: LockBackend = { name: 'plain', claim: (r) => backend.claim(r), close: async () => undefined };
    const other = new LockEngine(plain);
    await expect(other.semaphore('k', 2)).rejects.toThrow(InvalidLockArgumentError);
    await expect(other.semaphore('k', 2)).rejects.toThrow('not supported by the plain backend');
    await other.close();
    expect(await engine.tryAcquire('k', { permits: 1 })).not.toBeNull();
  });
});
