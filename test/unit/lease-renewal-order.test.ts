import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { ClaimRequest, LockBackend, LockClaim } from '../../lib/backend.js';
import { LockEngine } from '../../lib/index.js';

/** The lease stores' local validity: the lease less 1 % and 2 ms (their default drift allowance). */
const validityOf = (leaseMs: number) => Math.floor(leaseMs * 0.99 - 2);

interface Renewal {
  readonly leaseMs: number;
  answer(validityMs: number | false): void;
}

/** A lease store whose renewals the test answers by hand (or never). */
class HandAnsweredBackend implements LockBackend {
  readonly name = 'by-hand';
  readonly renewals: Renewal[] = [];

  claim(request: ClaimRequest): LockClaim {
    return {
      tryAcquire: () => Promise.resolve({ acquired: true, fence: 1, validityMs: validityOf(request.leaseMs) }),
      waitForChange: () => Promise.resolve(),
      renew: (leaseMs) => new Promise((resolve) => this.renewals.push({ leaseMs, answer: resolve })),
      release: () => Promise.resolve(true),
      validityFor: validityOf,
    };
  }

  async close(): Promise<void> {}
}

describe('renewals that change the lease (fake timers)', () => {
  let backend: HandAnsweredBackend;
  let engine: LockEngine;

  beforeEach(() => {
    jest.useFakeTimers();
    backend = new HandAnsweredBackend();
    engine = new LockEngine(backend, { leaseMs: 3_000, waitMs: 0 });
  });

  afterEach(async () => {
    await engine.close();
    jest.useRealTimers();
  });

  it('an extend waits for the renewal in flight: two in flight could land in one order and be answered in the other', async () => {
    const lock = await engine.acquire('k');
    await jest.advanceTimersByTimeAsync(1_000);
    expect(backend.renewals.map((renewal) => renewal.leaseMs)).toEqual([3_000]);
    const extended = lock.extend(1_000);
    await jest.advanceTimersByTimeAsync(0);
    expect(backend.renewals).toHaveLength(1);
    backend.renewals[0].answer(validityOf(3_000));
    await jest.advanceTimersByTimeAsync(0);
    expect(backend.renewals.map((renewal) => renewal.leaseMs)).toEqual([3_000, 1_000]);
    const sentAt = performance.now();
    backend.renewals[1].answer(validityOf(1_000));
    await extended;
    expect(lock.expiresAt - Date.now()).toBeLessThanOrEqual(validityOf(1_000) - (performance.now() - sentAt) + 1);
  });

  it('a renewal that shortens the lease counts from when it is sent: with its answer lost, the lock is lost by then', async () => {
    const lock = await engine.acquire('k', { leaseMs: 10_000 });
    await jest.advanceTimersByTimeAsync(100);
    // The store may apply it (a 1 s lease from its arrival) even if its answer never comes back.
    void lock.extend(1_000).catch(() => undefined);
    await jest.advanceTimersByTimeAsync(validityOf(1_000) - 1);
    expect(lock.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(2);
    expect(lock.signal.aborted).toBe(true);
  });
});
