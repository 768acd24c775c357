import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { LockEngine, LockTimeoutError, type Lock, type LockEvent } from '../../lib/index.js';
import { waitUntil } from '../harness/server-process.js';
import { BusySpy } from '../support/observed-backend.js';
import { EtcdFixture } from './etcd-target.js';

// What the etcd backend leaves in etcd, seen with a client of the test's own.
const etcd = new EtcdFixture();
const keyPrefix = `store:${randomUUID().slice(0, 8)}:`;
const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
const engines: LockEngine[] = [];
let a: LockEngine;
let b: LockEngine;

async function newEngine(spy?: BusySpy): Promise<LockEngine> {
  const backend = await etcd.backend();
  const engine = new LockEngine(spy ? spy.wrap(backend) : backend, { keyPrefix, leaseMs: 10_000, waitMs: 10_000 });
  engines.push(engine);
  return engine;
}

beforeAll(async () => {
  await etcd.start();
  a = await newEngine();
  b = await newEngine();
}, 30_000);

afterAll(async () => {
  await Promise.allSettled(engines.map((engine) => engine.close()));
  await etcd.stop();
}, 30_000);

describe('etcd keys of a lock', () => {
  it("binds every lock of a backend to the backend's one lease, and the fence is the key's create revision", async () => {
    const [k1, k2, k3] = [key('one'), key('two'), key('three')];
    const first = await a.acquire(k1);
    const second = await a.acquire(k2);
    const third = await b.acquire(k3);
    const [keys1, keys2, keys3] = await Promise.all([k1, k2, k3].map((k) => etcd.lockKeys(keyPrefix + k)));
    expect(keys1).toHaveLength(1);
    expect(keys1[0].key.startsWith(`${keyPrefix}${k1}/write/`)).toBe(true);
    expect(keys1[0].createRevision).toBe(first.fence);
    expect(keys2[0].createRevision).toBe(second.fence);
    expect(keys1[0].lease).toBe(keys2[0].lease);
    expect(keys3[0].lease).not.toBe(keys1[0].lease); // another backend, another lease
    expect(Number(keys1[0].lease)).not.toBe(0);
    await Promise.all([first, second, third].map((lock) => lock.release()));
    expect(await etcd.lockKeys(keyPrefix + k1)).toEqual([]);
  });

  it('gives a waiter a key of its own behind the holder, and deletes it when the waiter gives up', async () => {
    const k = key('give-up');
    const holder = await a.acquire(k);
    const waiting = b.acquire(k, { waitMs: 1_000 });
    await waitUntil('the waiter key', async () => (await etcd.lockKeys(keyPrefix + k)).length === 2, 5_000);
    const [held, queued] = await etcd.lockKeys(keyPrefix + k);
    expect(held.createRevision).toBe(holder.fence);
    expect(queued.createRevision).toBeGreaterThan(holder.fence!);
    await expect(waiting).rejects.toBeInstanceOf(LockTimeoutError);
    await waitUntil('the waiter key to go', async () => (await etcd.lockKeys(keyPrefix + k)).length === 1, 5_000);
    const controller = new AbortController();
    const aborted = b.acquire(k, { signal: controller.signal });
    await waitUntil('the second waiter key', async () => (await etcd.lockKeys(keyPrefix + k)).length === 2, 5_000);
    controller.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up');
    await waitUntil(
      'the second waiter key to go',
      async () => (await etcd.lockKeys(keyPrefix + k)).length === 1,
      5_000,
    );
    await holder.release();
  });

  it('wakes only the next waiter on each release (no herd), in queue order', async () => {
    const spy = new BusySpy();
    const engine = await newEngine(spy);
    const k = key('herd');
    const holder = await engine.acquire(k);
    const order: number[] = [];
    const runs: Promise<void>[] = [];
    for (let i = 0; i < 6; i++) {
      runs.push(engine.withLock(k, async () => void order.push(i)));
      await spy.whenBusy(i + 1);
    }
    await holder.release();
    await Promise.all(runs);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    // The first attempt queued each waiter; one wake-up when the key ahead went was enough.
    expect(spy.attempts.slice(1).map((claim) => claim.count)).toEqual([2, 2, 2, 2, 2, 2]);
  });

  it('puts a waiter whose key was deleted behind its back back in the queue, and it still gets the lock', async () => {
    const k = key('requeue');
    const holder = await a.acquire(k);
    const waiting = b.acquire(k);
    await waitUntil('the waiter key', async () => (await etcd.lockKeys(keyPrefix + k)).length === 2, 5_000);
    const [, queued] = await etcd.lockKeys(keyPrefix + k);
    await etcd.client.delete().key(queued.key);
    await holder.release();
    const next = await waiting;
    const [now] = await etcd.lockKeys(keyPrefix + k);
    expect(now.createRevision).toBe(next.fence);
    expect(next.fence!).toBeGreaterThan(queued.createRevision);
    await next.release();
  });

  it('keeps keys of any characters and 64 KiB long apart and safe', async () => {
    // 'a/write/x' first: unescaped, its key would sit under lock 'a' and block it.
    const names = [
      'a/write/x',
      'a/b',
      'a',
      'a%2Fb',
      '%',
      '/',
      '\uD800',
      '\uDC00',
      '\uFFFD',
      'ü😀',
      'k'.repeat(65_536),
      '/'.repeat(65_536),
    ];
    const locks: Lock[] = [];
    for (const name of names) locks.push(await a.acquire(name, { waitMs: 0 }));
    for (const name of names) expect(await b.tryAcquire(name)).toBeNull();
    expect(new Set(locks.map((lock) => lock.fence)).size).toBe(names.length);
    await Promise.all(locks.map((lock) => lock.release()));
    for (const name of names) await (await b.acquire(name, { waitMs: 0 })).release();
  }, 20_000);

  it('holds a lock whose leaseMs is far above the lease TTL: validity stays within the TTL and renewals come in time', async () => {
    const ttlMs = 2_000;
    const engine = new LockEngine(await etcd.backend(ttlMs / 1000), { keyPrefix, leaseMs: 60_000 });
    engines.push(engine);
    const extended: LockEvent[] = [];
    let enough!: () => void;
    const fourRenewals = new Promise<void>((resolve) => (enough = resolve));
    const subscription = engine.events.subscribe((event) => {
      if (event.type === 'extended' && extended.push(event) === 4) enough();
    });
    const k = key('long-lease');
    const lock = await engine.acquire(k);
    expect(lock.expiresAt).toBeLessThanOrEqual(Date.now() + ttlMs);
    await fourRenewals;
    subscription.unsubscribe();
    // Four renewals at most TTL/2 apart: well past the TTL, still held, and never promised past the lease.
    expect(lock.signal.aborted).toBe(false);
    expect(lock.expiresAt).toBeLessThanOrEqual(Date.now() + ttlMs);
    expect(await a.tryAcquire(k)).toBeNull();
    await lock.release();
  }, 20_000);
});
