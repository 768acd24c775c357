import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { LockBackendError, LockLostError, type LockEngine, type LockInfo } from '../../lib/index.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { waitUntil } from '../harness/server-process.js';
import { key, nextEvent, RedlockEngines, timed } from './redlock-engines.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Master failures on 5 real redis-servers: SIGKILL (down), SIGSTOP (hung), and their return. */
describe('redlock over 5 masters: failures', () => {
  let masters: RedisMasters;
  let engines: RedlockEngines;

  beforeAll(async () => {
    masters = await RedisMasters.start(5);
    engines = new RedlockEngines(masters);
  }, 30_000);

  afterEach(async () => {
    await engines.closeAll();
    for (let i = 0; i < 5; i++) masters.resume(i);
    const down = masters.servers.flatMap((server, i) => (server.running ? [] : [i]));
    await masters.restart(...down);
  }, 30_000);

  afterAll(async () => {
    await engines?.closeAll();
    await masters?.stop();
  }, 30_000);

  /** 12 holders on 2 instances increment a non-atomic counter; none may overlap. */
  async function assertExclusion(a: LockEngine, b: LockEngine, k: string): Promise<void> {
    let counter = 0;
    let inside = 0;
    let maxInside = 0;
    const increment = (engine: LockEngine) =>
      engine.withLock(
        k,
        async () => {
          maxInside = Math.max(maxInside, ++inside);
          const read = counter;
          await tick();
          counter = read + 1;
          inside--;
        },
        { waitMs: 20_000 },
      );
    await Promise.all(Array.from({ length: 12 }, (_, i) => increment(i % 2 ? a : b)));
    expect(counter).toBe(12);
    expect(maxInside).toBe(1);
  }

  it('with 2 of 5 masters SIGKILLed, acquisitions still succeed, exclusion holds, and a waiter wakes on the release', async () => {
    const a = await engines.create();
    const b = await engines.create();
    await masters.kill(3, 4);
    const k = key('two-down');
    const { value: lock, ms } = await timed(() => a.acquire(k));
    expect(lock).toBeDefined();
    expect(ms).toBeLessThan(1_000);
    expect(await masters.countHolding(engines.storeKey(k))).toBe(3);
    expect(await b.tryAcquire(k)).toBeNull();
    await lock!.release();
    expect(await masters.countHolding(engines.storeKey(k))).toBe(0);
    await assertExclusion(a, b, k);

    // A waiter still wakes on the release message (it listens on the 3 live masters), long before the 20 s lease.
    const held = await a.acquire(k, { leaseMs: 20_000 });
    const waiter = b.acquire(k, { waitMs: 15_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const releasedAt = performance.now();
    await held.release();
    await (await waiter).release();
    expect(performance.now() - releasedAt).toBeLessThan(2_000);
  }, 30_000);

  it('with 3 of 5 masters SIGKILLed, acquire fails fast with LockBackendError (not busy), and works again once they return', async () => {
    const a = await engines.create();
    await masters.kill(0, 1, 2);
    const k = key('three-down');
    const acquire = await timed(() => a.acquire(k, { waitMs: 5_000 }));
    expect(acquire.error).toBeInstanceOf(LockBackendError);
    expect((acquire.error as Error).message).toMatch(/no quorum reachable: only 2 of 5 masters could answer, 3 needed/);
    // Fails at once, not after waitMs: the store is down, the lock is not busy.
    expect(acquire.ms).toBeLessThan(1_500);
    await expect(a.tryAcquire(k)).rejects.toBeInstanceOf(LockBackendError);
    console.info(`redlock: 3 of 5 down → LockBackendError after ${Math.round(acquire.ms)} ms`);

    await masters.restart(0, 1, 2);
    const restartedAt = performance.now();
    // The clients reconnect on their own (ioredis backs off up to 2 s between attempts).
    let lock: Awaited<ReturnType<LockEngine['tryAcquire']>> = null;
    await waitUntil(
      'an acquisition after the masters returned',
      async () => (lock = await a.tryAcquire(k)) !== null,
      10_000,
      50,
    );
    console.info(
      `redlock: masters back → first acquisition ${Math.round(performance.now() - restartedAt)} ms after the restart`,
    );
    expect(await masters.countHolding(engines.storeKey(k))).toBeGreaterThanOrEqual(3);
    await lock!.release();
  }, 30_000);

  it('when 3 of 5 masters die under a holder, renewals fail and its signal aborts by the end of its validity; nobody else gets the lock', async () => {
    const a = await engines.create({ leaseMs: 1_500 });
    const b = await engines.create();
    const k = key('lose-quorum');
    const lock = await a.acquire(k);
    const extendFailed = nextEvent(a, 'extend-failed');
    const lost = nextEvent(a, 'lost');
    const killedAt = performance.now();
    await masters.kill(0, 1, 2);
    await expect(b.acquire(k, { waitMs: 200 })).rejects.toBeInstanceOf(LockBackendError);
    expect((await extendFailed).event).toMatchObject({ type: 'extend-failed', key: k });
    const { at } = await lost;
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    // Lost when its validity (1 500 ms - drift from the last good renewal, before the kill) ran out, not later.
    expect(at - killedAt).toBeLessThan(1_500 + 1_000);
    console.info(
      `redlock: quorum lost under a holder → signal aborted ${Math.round(at - killedAt)} ms after the kill (lease 1500 ms)`,
    );
  }, 30_000);

  it('a SIGSTOPped master does not stall acquisition beyond the per-node timeout, and gets the give-back once it resumes', async () => {
    const nodeTimeoutMs = 50;
    const a = await engines.create({}, { nodeTimeoutMs });
    const b = await engines.create({}, { nodeTimeoutMs });
    const k = key('paused');
    masters.pause(0);
    const timings: number[] = [];
    for (let i = 0; i < 10; i++) {
      const { value: lock, ms } = await timed(() => a.acquire(k, { waitMs: 0 }));
      timings.push(ms);
      const busy = await timed(() => b.tryAcquire(k));
      timings.push(busy.ms);
      expect(busy.value).toBeNull();
      await lock!.release();
    }
    // A hung master would otherwise hold each call for ioredis' 5 s command timeout.
    expect(Math.max(...timings)).toBeLessThan(nodeTimeoutMs + 1_000);
    console.info(
      `redlock: 1 master SIGSTOPped → acquire / busy answer in max ${Math.round(Math.max(...timings))} ms (node timeout ${nodeTimeoutMs} ms)`,
    );

    // With 3 masters hung, no quorum answers: LockBackendError after 3 rounds (per-node timeouts of 50, 100 and 200 ms,
    // each followed by a give-back that waits 50 ms for them, with 50 ms pauses between rounds), not after 5 s.
    masters.pause(1);
    masters.pause(2);
    const stalled = await timed(() => a.acquire(k, { waitMs: 5_000 }));
    expect(stalled.error).toBeInstanceOf(LockBackendError);
    expect(stalled.ms).toBeGreaterThanOrEqual(12 * nodeTimeoutMs - 10);
    expect(stalled.ms).toBeLessThan(12 * nodeTimeoutMs + 1_000);
    console.info(`redlock: 3 masters SIGSTOPped → LockBackendError after ${Math.round(stalled.ms)} ms`);

    // On SIGCONT the hung masters run the queued acquisitions, then the give-backs queued after them: nothing is left behind.
    for (const i of [0, 1, 2]) masters.resume(i);
    await waitUntil(
      'the resumed masters to drain their queues',
      async () => (await masters.command(0, 'PING')) === 'PONG',
      10_000,
    );
    await waitUntil(
      'no key left on any master',
      async () => (await masters.countHolding(engines.storeKey(k))) === 0,
      5_000,
      50,
    );
    const again = await a.acquire(k, { waitMs: 5_000 });
    expect(await masters.countHolding(engines.storeKey(k))).toBe(5);
    await again.release();
  }, 30_000);

  it('a quorum reached after the lease minus the drift is not a grant: the round gives its keys back', async () => {
    // Masters 0-2 hang; they answer only when resumed, after the 150 ms lease has been spent waiting for them.
    const a = await engines.create({ leaseMs: 150 }, { nodeTimeoutMs: 5_000, driftFactor: 0 });
    const k = key('spent');
    for (const i of [0, 1, 2]) masters.pause(i);
    setTimeout(() => [0, 1, 2].forEach((i) => masters.resume(i)), 400);
    const { value, ms } = await timed(() => a.tryAcquire(k));
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(value).toBeNull();
    // Given back at once, not left to lapse with the lease.
    expect(await masters.countHolding(engines.storeKey(k))).toBe(0);
  }, 30_000);

  it('reports the validity, not the nominal lease: expiresAt = start + lease - drift', async () => {
    const a = await engines.create({}, { driftFactor: 0.2 });
    const before = Date.now();
    const lock = await a.acquire(key('validity'), { leaseMs: 10_000 });
    const after = Date.now();
    // drift = 10 000 x 0.2 + 2 = 2 002 ms
    expect(lock.expiresAt).toBeLessThanOrEqual(after + 10_000 - 2_002 + 2);
    expect(lock.expiresAt).toBeGreaterThanOrEqual(before + 10_000 - 2_002 - 2);
    await lock.release();
  });

  it('ping() needs a quorum of masters', async () => {
    const a = await engines.create();
    await expect(a.backend.ping!()).resolves.toBeUndefined();
    await masters.kill(0, 1, 2);
    await expect(a.backend.ping!()).rejects.toBeInstanceOf(LockBackendError);
  });

  it("lists a held key that reaches a master already scanned while the listing runs (an acquisition's late write)", async () => {
    const engine = await engines.create();
    const prefix = key('late');
    // Held on masters 1-4 only, as when master 0's write is still on its way after the round's quorum.
    const late = await engine.acquire(`${prefix}:held`);
    const lateKey = engines.storeKey(`${prefix}:held`);
    // The acquisition returned at its quorum: wait for all five writes, so that the DEL below is the last word on master 0.
    await waitUntil(`${lateKey} on all 5 masters`, async () => (await masters.countHolding(lateKey)) === 5, 5_000, 5);
    const [owner, ttl] = [
      String(await masters.command(1, 'GET', lateKey)),
      String(await masters.command(1, 'PTTL', lateKey)),
    ];
    await masters.command(0, 'DEL', lateKey);
    // On master 0 only (no quorum: not listed), so that the first page (limit 1) fills up with master 0.
    await masters.command(0, 'SET', engines.storeKey(`${prefix}:stray`), 'someone', 'PX', '60000');

    const first = await engine.list({ prefix: `${prefix}:`, limit: 1 });
    expect(first).toEqual({ locks: [], cursor: '1:' });
    // The late write lands on master 0 between the pages.
    await masters.command(0, 'SET', lateKey, owner, 'PX', ttl);
    const seen: LockInfo[] = [...first.locks];
    let cursor = first.cursor;
    for (let pages = 0; cursor !== undefined && pages < 100; pages++) {
      const page = await engine.list({ prefix: `${prefix}:`, limit: 1, cursor });
      seen.push(...page.locks);
      cursor = page.cursor;
    }
    expect(seen).toEqual([expect.objectContaining({ key: `${prefix}:held`, held: true })]);
    await late.release();
  });
});
