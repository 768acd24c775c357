import { InvalidLockArgumentError, LockLostError } from '../errors.js';
import type { LockEngine } from '../engine/lock-engine.js';
import { keepingAlive, type ContractTestRunner } from './contract-runner.js';
import { expect } from './contract-expect.js';
import { useContractSuite } from './contract-suite.js';
import type { LockBackendContractTarget } from './contract-target.js';

/** Resolves when `signal` aborts, with the time it happened (performance.now()). */
function abortedAt(signal: AbortSignal): Promise<number> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(performance.now());
    signal.addEventListener('abort', () => resolve(performance.now()), { once: true });
  });
}

/**
 * `minHoldMs` (hold at least, kept by the store after the holder released or exited) and
 * `maxHoldMs` (renewal stops, the holder is told, the key frees within a lease). Stores that cannot
 * keep a released key refuse `minHoldMs` by name.
 */
export function describeHoldBoundsContract(
  name: string,
  target: LockBackendContractTarget,
  testRunner: ContractTestRunner,
): void {
  const runner = keepingAlive(testRunner);
  runner.describe(`${name} minHoldMs / maxHoldMs`, () => {
    const suite = useContractSuite(runner, target, 'hold', { leaseMs: 5_000, waitMs: 5_000 });
    const { key } = suite;
    let a: LockEngine;
    let b: LockEngine;
    let keepsHold: boolean;
    runner.beforeAll(async () => {
      ({ a, b } = suite);
      keepsHold = a.backend.capabilities?.minHold === true;
    });

    runner.it(
      'minHoldMs: a key released early stays taken until minHoldMs after the acquisition, then frees by itself (waiters woken, not at the lease)',
      async () => {
        if (!keepsHold) return;
        const k = key('min-hold');
        const calledAt = performance.now();
        const first = await a.acquire(k, { minHoldMs: 1_500, leaseMs: 20_000 });
        await first.release();
        expect(first.signal.aborted).toBe(true);
        expect(await b.tryAcquire(k)).toBeNull();
        expect(await a.tryAcquire(k)).toBeNull();
        const next = await b.acquire(k, { waitMs: 15_000 });
        const freedAfterMs = performance.now() - calledAt;
        expect(freedAfterMs).toBeGreaterThanOrEqual(1_500);
        // Freed by the remainder's own expiry (etcd rounds it up to whole seconds), far before the 20 s lease.
        expect(freedAfterMs).toBeLessThan(6_000);
        if (target.fences) expect(next.fence!).toBeGreaterThan(first.fence!);
        await next.release();
      },
      20_000,
    );

    runner.it('minHoldMs: a release after minHoldMs frees the key at once', async () => {
      if (!keepsHold) return;
      const k = key('min-hold-passed');
      const first = await a.acquire(k, { minHoldMs: 100 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await first.release();
      const next = await b.tryAcquire(k);
      expect(next).not.toBeNull();
      await next!.release();
    });

    runner.it(
      'minHoldMs: the release stays owner-checked: a holder whose key was taken meanwhile cannot keep it',
      async () => {
        if (!keepsHold || !target.expireLock) return;
        const k = key('min-hold-owner');
        const stale = await a.acquire(k, { minHoldMs: 5_000, leaseMs: 5_000 });
        await target.expireLock(suite.keyPrefix + k);
        const current = await b.acquire(k, { leaseMs: 1_000, waitMs: 5_000 });
        await expect(stale.release()).rejects.toBeInstanceOf(LockLostError);
        await current.release();
        // Had the stale release kept the key for 5 s, it would still be taken.
        const after = await a.tryAcquire(k);
        expect(after).not.toBeNull();
        await after!.release();
      },
      20_000,
    );

    runner.it('minHoldMs is refused, naming the store, where the store cannot keep a released key', async () => {
      if (keepsHold) {
        await expect(a.acquire(key('min-hold-read'), { minHoldMs: 100, mode: 'read' })).rejects.toBeInstanceOf(
          InvalidLockArgumentError,
        );
        return;
      }
      const error = await a.acquire(key('min-hold-refused'), { minHoldMs: 1_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidLockArgumentError);
      expect((error as Error).message).toContain(`${a.backend.name} backend`);
      expect((error as Error).message).toContain('minHoldMs');
    });

    runner.it(
      'maxHoldMs: renewal stops, the signal aborts with LockLostError saying why, and the key frees within a lease',
      async () => {
        const k = key('max-hold');
        const leaseMs = 1_500;
        const calledAt = performance.now();
        const hung = await a.acquire(k, { leaseMs, maxHoldMs: 2_000 });
        const stoppedAt = await abortedAt(hung.signal);
        expect(stoppedAt - calledAt).toBeGreaterThanOrEqual(2_000);
        expect(hung.signal.reason).toBeInstanceOf(LockLostError);
        expect((hung.signal.reason as Error).message).toContain('maxHoldMs');
        const next = await b.acquire(k, { waitMs: 10_000 });
        expect(performance.now() - stoppedAt).toBeLessThan(leaseMs + 2_000);
        // The hung holder's late release is refused and cannot free the new holder's key.
        await expect(hung.release()).rejects.toBeInstanceOf(LockLostError);
        expect(await a.tryAcquire(k)).toBeNull();
        await next.release();
      },
      20_000,
    );

    runner.it('maxHoldMs: a holder that releases in time is unaffected', async () => {
      const k = key('max-hold-in-time');
      const lock = await a.acquire(k, { maxHoldMs: 5_000 });
      await lock.release();
      expect(lock.signal.reason).not.toBeInstanceOf(LockLostError);
      const next = await b.tryAcquire(k);
      expect(next).not.toBeNull();
      await next!.release();
    });
  });
}
