import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { LockEngine, LockTimeoutError } from '../../lib/index.js';
import { LockKeys, SemaphoreKeys } from '../../lib/backends/etcd/etcd-keys.js';
import { waitUntil } from '../harness/server-process.js';
import { BusySpy } from '../support/observed-backend.js';
import { EtcdFixture } from './etcd-target.js';

// What the etcd backend's semaphores leave in etcd, and how their waiters wake, seen with a client of the test's own.
const etcd = new EtcdFixture();
const keyPrefix = `sem-store:${randomUUID().slice(0, 8)}:`;
const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
const engines: LockEngine[] = [];

async function newEngine(spy?: BusySpy): Promise<LockEngine> {
  const backend = await etcd.backend();
  const engine = new LockEngine(spy ? spy.wrap(backend) : backend, { keyPrefix, leaseMs: 10_000, waitMs: 10_000 });
  engines.push(engine);
  return engine;
}

/** The permit keys of one semaphore, in queue order. */
async function permitKeys(storeKey: string): Promise<{ key: string; createRevision: number; lease: string }[]> {
  const response = await etcd.client
    .getAll()
    .prefix(new SemaphoreKeys(storeKey).prefix)
    .sort('Create', 'Ascend')
    .exec();
  return response.kvs.map((kv) => ({
    key: kv.key.toString(),
    createRevision: Number(kv.create_revision),
    lease: kv.lease,
  }));
}

beforeAll(() => etcd.start(), 30_000);

afterAll(async () => {
  await Promise.allSettled(engines.map((engine) => engine.close()));
  await etcd.stop();
}, 30_000);

describe('etcd semaphore key layout', () => {
  const keys = ['a', 'a/b', 'a%sem', 'a%sem/x', 'a/write', 'ab', 'a%2F', 'a%'];
  const startsWith = (key: Buffer, prefix: Buffer) => key.subarray(0, prefix.length).equals(prefix);

  it("never puts a permit under a lock's prefix or another semaphore's, nor a lock's claim under a semaphore's", () => {
    for (const one of keys) {
      for (const other of keys) {
        const permit = new SemaphoreKeys(one).permitKey('owner/with/slashes');
        expect(startsWith(permit, new LockKeys(other).prefix)).toBe(false);
        expect(startsWith(new LockKeys(one).claimKey('write', 'o'), new SemaphoreKeys(other).prefix)).toBe(false);
        if (one !== other) expect(startsWith(permit, new SemaphoreKeys(other).prefix)).toBe(false);
      }
    }
    expect(new SemaphoreKeys('a/b').permitKey('o/1').toString()).toBe('a%2Fb%sem/o%2F1');
  });
});

describe('etcd semaphores', () => {
  it("files permits under the key's semaphore prefix, apart from its lock, bound to the backend's lease; fence = create revision", async () => {
    const engine = await newEngine();
    const k = key('layout');
    const lock = await engine.acquire(k);
    const permits = [await engine.semaphore(k, 2), await engine.semaphore(k, 2)];
    const keys = await permitKeys(keyPrefix + k);
    expect(keys.map((entry) => entry.key.startsWith(`${keyPrefix}${k}%sem/`))).toEqual([true, true]);
    expect(keys.map((entry) => entry.createRevision)).toEqual(permits.map((permit) => permit.fence));
    expect(new Set(keys.map((entry) => entry.lease)).size).toBe(1);
    expect(await etcd.lockKeys(keyPrefix + k)).toHaveLength(1); // the lock's own key only
    await Promise.all([lock.release(), ...permits.map((permit) => permit.release())]);
    expect(await permitKeys(keyPrefix + k)).toEqual([]);
  });

  it('wakes exactly the waiter each release lets in, whichever key ahead went (no herd, no missed wake-up)', async () => {
    const spy = new BusySpy();
    const engine = await newEngine(spy);
    const k = key('herd');
    const holders = [await engine.semaphore(k, 2), await engine.semaphore(k, 2)];
    const order: number[] = [];
    const runs: Promise<void>[] = [];
    for (let i = 0; i < 6; i++) {
      runs.push(engine.withLock(k, async () => void order.push(i), { permits: 2 }));
      await spy.whenBusy(i + 1);
    }
    const startedAt = performance.now();
    // Only the oldest holder goes: the six waiters pass one by one through its permit while the other
    // holder stays. A waiter watching one chosen key ahead (the nearest, or the one `permits` places
    // ahead) would sleep on a key that is still there.
    await holders[0].release();
    await Promise.all(runs);
    // Well below the fallback look (the lease TTL, 10 s): every waiter was woken by a watch event.
    expect(performance.now() - startedAt).toBeLessThan(3_000);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    // The first attempt queued each waiter; its one wake-up came when enough keys ahead were gone.
    expect(spy.attempts.slice(2).map((claim) => claim.count)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(holders[1].signal.aborted).toBe(false);
    await holders[1].release();
  });

  it('puts a waiter whose key was deleted behind its back straight back in the queue, and it still gets in', async () => {
    const k = key('requeue');
    const engine = await newEngine();
    const holder = await engine.semaphore(k, 1);
    const waiting = engine.semaphore(k, 1);
    await waitUntil('the waiter key', async () => (await permitKeys(keyPrefix + k)).length === 2, 5_000);
    const [, queued] = await permitKeys(keyPrefix + k);
    const deletedAt = performance.now();
    await etcd.client.delete().key(queued.key);
    // Its own key's deletion wakes it (not the fallback look after the 10 s TTL): it queues again.
    await waitUntil(
      'the waiter to queue again',
      async () => (await permitKeys(keyPrefix + k))[1]?.createRevision !== undefined,
      5_000,
    );
    expect(performance.now() - deletedAt).toBeLessThan(3_000);
    const [, requeued] = await permitKeys(keyPrefix + k);
    expect(requeued.createRevision).toBeGreaterThan(queued.createRevision);
    await holder.release();
    const permit = await waiting;
    expect(permit.fence).toBe(requeued.createRevision);
    await permit.release();
  });

  it('deletes the key of a waiter that gives up, and the claims behind it move up', async () => {
    const k = key('give-up');
    const a = await newEngine();
    const b = await newEngine();
    const holder = await a.semaphore(k, 1);
    const leaving = b.semaphore(k, 1, { waitMs: 500 });
    const staying = b.semaphore(k, 1, { waitMs: 10_000 });
    await waitUntil('two waiter keys', async () => (await permitKeys(keyPrefix + k)).length === 3, 5_000);
    await expect(leaving).rejects.toBeInstanceOf(LockTimeoutError);
    await waitUntil('the leaving waiter key to go', async () => (await permitKeys(keyPrefix + k)).length === 2, 5_000);
    await holder.release();
    const next = await staying;
    expect((await permitKeys(keyPrefix + k)).map((entry) => entry.createRevision)).toEqual([next.fence]);
    await next.release();
  });
});
