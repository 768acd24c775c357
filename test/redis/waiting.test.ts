import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLockBackend, LockEngine, type Lock } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/server-process.js';
import { asleepOn } from '../support/internal-seams.js';

/** Wraps a backend to count attempts, and tells how many of its claims sleep until a release. */
function countingBackend(backend: LockBackend) {
  const stats = { tries: 0, asleep: (storeKey: string) => asleepOn(backend, storeKey) };
  const counted: LockBackend = {
    name: backend.name,
    capabilities: backend.capabilities,
    close: () => backend.close(),
    claim(request) {
      const claim = backend.claim(request);
      return {
        tryAcquire: () => (stats.tries++, claim.tryAcquire()),
        waitForChange: (maxMs, signal) => claim.waitForChange(maxMs, signal),
        renew: (leaseMs) => claim.renew(leaseMs),
        release: () => claim.release(),
      };
    },
  };
  return { counted, stats };
}

describe('redis backend waiting', () => {
  let server: RedisServer;
  const engines: LockEngine[] = [];
  const subscribers = (channel: string) => Number(server.cli('PUBSUB', 'NUMSUB', channel).split('\n')[1]);

  beforeAll(async () => {
    server = await RedisServer.start();
  }, 30_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    await server?.stop();
  });

  it('one release wakes one of 20 waiters of a process, not all of them; one subscription serves them all', async () => {
    const holderEngine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }));
    const { counted, stats } = countingBackend(await createLockBackend({ type: 'redis', url: server.url }));
    const waiterEngine = new LockEngine(counted, { waitMs: 60_000 });
    engines.push(holderEngine, waiterEngine);

    // A long lease: the engine's fallback wake-up (the holder's TTL) cannot fire during the test.
    const held = await holderEngine.acquire('herd', { leaseMs: 60_000 });
    const order: number[] = [];
    let triesAtFirstGrant = -1;
    const waiters = Array.from({ length: 20 }, (_, i) =>
      waiterEngine.withLock('herd', async () => {
        if (order.length === 0) triesAtFirstGrant = stats.tries;
        order.push(i);
        await new Promise((resolve) => setImmediate(resolve));
      }),
    );
    await waitUntil('all 20 waiters asleep', () => stats.asleep('lock:herd') === 20, 10_000, 5);
    expect(subscribers('{lock:herd}:released')).toBe(1);

    const triesBefore = stats.tries;
    await held.release();
    await Promise.all(waiters);

    // The first release led to one attempt (a herd would make 20); every later hand-off (a local release
    // wakes the next local waiter directly, and the backend ignores its own message) to exactly one more.
    expect(triesAtFirstGrant - triesBefore).toBe(1);
    expect(stats.tries - triesBefore).toBe(20);
    expect(order).toHaveLength(20);
    await waitUntil(
      'the channel unsubscribed after the last waiter left',
      () => subscribers('{lock:herd}:released') === 0,
      5_000,
    );
  }, 30_000);

  it('wakes the oldest waiter of a process first', async () => {
    const holderEngine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }));
    const { counted, stats } = countingBackend(await createLockBackend({ type: 'redis', url: server.url }));
    const waiterEngine = new LockEngine(counted, { waitMs: 60_000 });
    engines.push(holderEngine, waiterEngine);
    const held = await holderEngine.acquire('oldest', { leaseMs: 60_000 });
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      waiters.push(waiterEngine.withLock('oldest', () => void order.push(i)));
      await waitUntil(`waiter ${i} asleep`, () => stats.asleep('lock:oldest') === i + 1, 10_000, 5);
    }
    await held.release();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  }, 30_000);

  it('a holder that releases and asks again at once goes behind the waiter of its own process', async () => {
    const { counted, stats } = countingBackend(await createLockBackend({ type: 'redis', url: server.url }));
    const engine = new LockEngine(counted, { waitMs: 60_000 });
    engines.push(engine);
    const order: string[] = [];
    const take = (name: string, lock: Promise<Lock>) => lock.then((held) => (order.push(name), held.release()));
    const first = await engine.acquire('barge', { leaseMs: 60_000 });
    const waiter = engine.acquire('barge');
    await waitUntil('the waiter asleep', () => stats.asleep('lock:barge') === 1, 10_000, 5);
    await first.release();
    const again = engine.acquire('barge');
    await Promise.all([take('waiter', waiter), take('releaser again', again)]);
    expect(order).toEqual(['waiter', 'releaser again']);
  }, 30_000);

  it('a waiter that gives up leaves the others waiting, and the last one to leave unsubscribes', async () => {
    const holderEngine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }));
    const waiterEngine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }));
    engines.push(holderEngine, waiterEngine);
    const held = await holderEngine.acquire('leave', { leaseMs: 60_000 });
    const quitter = new AbortController();
    const giving = waiterEngine.acquire('leave', { waitMs: 60_000, signal: quitter.signal });
    const staying = waiterEngine.acquire('leave', { waitMs: 60_000 });
    await waitUntil('subscribed', () => subscribers('{lock:leave}:released') === 1);
    quitter.abort(new Error('gave up'));
    await expect(giving).rejects.toThrow('gave up');
    expect(subscribers('{lock:leave}:released')).toBe(1);
    const releasedAt = performance.now();
    await held.release();
    await (await staying).release();
    expect(performance.now() - releasedAt).toBeLessThan(2_000);
    await waitUntil('unsubscribed', () => subscribers('{lock:leave}:released') === 0, 5_000);
  }, 30_000);

  it('announces a release while claims of its own process wait, even when no flag says the key is waited for', async () => {
    const backend = await createLockBackend({ type: 'redis', url: server.url });
    const [holderEngine, waiterEngine] = [new LockEngine(backend), new LockEngine(backend)];
    engines.push(holderEngine, waiterEngine);
    const held = await holderEngine.acquire('own', { leaseMs: 60_000 });
    const waiting = waiterEngine.acquire('own', { waitMs: 60_000 });
    await waitUntil('the waiter asleep', () => asleepOn(backend, 'lock:own') === 1, 5_000, 5);
    // As if the flag had lapsed: only the release's own knowledge of its process's waiters is left.
    expect(server.cli('DEL', '{lock:own}:waiting')).toBe('1');
    const releasedAt = performance.now();
    await held.release();
    await (await waiting).release();
    expect(performance.now() - releasedAt).toBeLessThan(2_000);
  }, 30_000);
});
