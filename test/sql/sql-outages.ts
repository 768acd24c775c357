import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { LockBackendError, LockEngine, LockLostError } from '../../lib/index.js';
import type { SqlTarget } from './sql-target.js';
import { nextEvent } from '../support/next-event.js';

/** The database goes away while a lock is held: what the holder, waiters and newcomers see. */
export function describeSqlOutages(target: SqlTarget): void {
  describe(`${target.name} restarted while a lock is held`, () => {
    const keyPrefix = `outage:${randomUUID().slice(0, 8)}:`;
    const engines: LockEngine[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    const newEngine = async (leaseMs: number) => {
      const engine = new LockEngine(await target.createBackend(), { keyPrefix, leaseMs, waitMs: 5_000 });
      engines.push(engine);
      return engine;
    };

    beforeAll(() => {
      process.on('unhandledRejection', onUnhandled);
    });

    afterAll(async () => {
      await Promise.allSettled(engines.map((engine) => engine.close()));
      process.off('unhandledRejection', onUnhandled);
    });

    it('a restart shorter than the lease: the lock survives, renewals resume, waiters are woken again', async () => {
      const [holder, other] = [await newEngine(9_000), await newEngine(9_000)];
      const lock = await holder.acquire('short');
      await target.stopDatabase();
      await target.startDatabase();
      // A renewal after the restart proves the row (and the pool) came back; it may take one lease/3.
      await nextEvent(holder, 'extended');
      expect(lock.signal.aborted).toBe(false);
      expect(await other.tryAcquire('short')).toBeNull();
      const waiter = other.acquire('short', { waitMs: 8_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const releasedAt = performance.now();
      await lock.release();
      const next = await waiter;
      expect(performance.now() - releasedAt).toBeLessThan(2_000);
      expect(next.fence).toBeGreaterThan(lock.fence!);
      await next.release();
      expect(unhandled).toEqual([]);
    }, 30_000);

    it("an outage longer than the lease: the holder's signal aborts, newcomers get LockBackendError, then the next holder a larger fence", async () => {
      const [holder, other] = [await newEngine(1_500), await newEngine(1_500)];
      const lock = await holder.acquire('long');
      const lost = nextEvent(holder, 'lost');
      await target.stopDatabase();
      try {
        const started = performance.now();
        const error = await other.acquire('long-newcomer', { waitMs: 3_000 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockBackendError);
        expect(performance.now() - started).toBeLessThan(8_000);
        expect(await lost).toMatchObject({ type: 'lost', key: 'long' });
        expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      } finally {
        await target.startDatabase();
      }
      const next = await other.acquire('long', { waitMs: 5_000 });
      expect(next.fence).toBeGreaterThan(lock.fence!);
      await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
      await next.release();
      expect(unhandled).toEqual([]);
    }, 40_000);
  });
}
