import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { LockLostError } from '../../lib/index.js';
import type { RedlockBackend } from '../../lib/backends/redlock/redlock-backend.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { waitUntil } from '../harness/server-process.js';
import { extendDecisively, key, nextEvent, RedlockEngines } from './redlock-engines.js';

/**
 * A master that restarts while a lock is held. Every scenario starts the same way: masters 3 and 4
 * still have the key of a crashed holder, so holder A's lock lives on exactly masters 0, 1 and 2
 * (a bare quorum); then master 2 crashes and comes back, and the crashed holder's keys go.
 */
describe('redlock: a master restarted while a lock is held', () => {
  let masters: RedisMasters | undefined;
  let engines: RedlockEngines | undefined;

  async function setUp(persistence: 'none' | 'aof') {
    masters = await RedisMasters.start(5, persistence);
    engines = new RedlockEngines(masters);
    return { masters, engines };
  }

  /** Puts a crashed holder's key on masters 3 and 4. */
  async function staleKeyOn34(storeKey: string): Promise<void> {
    for (const i of [3, 4]) await masters!.command(i, 'SET', storeKey, 'crashed-holder', 'PX', '60000');
  }

  /** The crashed holder's keys lapse. */
  async function dropStaleKeys(storeKey: string): Promise<void> {
    for (const i of [3, 4]) await masters!.command(i, 'DEL', storeKey);
  }

  afterEach(async () => {
    await engines?.closeAll();
    await masters?.stop();
    masters = undefined;
    engines = undefined;
  }, 30_000);

  afterAll(async () => {
    await engines?.closeAll();
    await masters?.stop();
  }, 30_000);

  it('without persistence and restarted at once, a second holder gets the lock while the first still holds it (the documented hazard); the first learns it at its next renewal', async () => {
    const { masters, engines } = await setUp('none');
    const a = await engines.create({ leaseMs: 30_000 });
    const b = await engines.create({ leaseMs: 30_000 });
    const k = key('hazard');
    await staleKeyOn34(engines.storeKey(k));
    const first = await a.acquire(k);
    await masters.restart(2); // SIGKILL, then start again: empty
    await dropStaleKeys(engines.storeKey(k));
    let second: Awaited<ReturnType<typeof b.tryAcquire>> = null;
    await waitUntil('B to reach masters 2, 3 and 4', async () => (second = await b.tryAcquire(k)) !== null, 10_000, 50);
    // Two holders at once: A's lease is still valid by its own clock, and its signal has not aborted.
    expect(second).not.toBeNull();
    expect(first.signal.aborted).toBe(false);
    expect(first.expiresAt).toBeGreaterThan(Date.now() + 20_000);
    // A's next renewal, once it reaches master 2 again, finds its key on 2 masters only, fewer than the quorum: lost.
    await waitUntil(
      'A to reach master 2 again',
      () => (a.backend as RedlockBackend).connectionStates[2] === 'ready',
      10_000,
      20,
    );
    await expect(extendDecisively(first)).rejects.toBeInstanceOf(LockLostError);
    expect(first.signal.reason).toBeInstanceOf(LockLostError);
    expect(second!.signal.aborted).toBe(false);
    await second!.release();
  }, 30_000);

  it('mitigation: a master kept down for longer than the lease before it restarts never lets a second holder in while the first trusts its lock', async () => {
    const { masters, engines } = await setUp('none');
    const leaseMs = 1_000;
    const a = await engines.create({ leaseMs });
    const b = await engines.create({ leaseMs });
    const k = key('delayed');
    await staleKeyOn34(engines.storeKey(k));
    const first = await a.acquire(k);
    const lost = nextEvent(a, 'lost');
    await masters.kill(2);
    const crashedAt = performance.now();
    await dropStaleKeys(engines.storeKey(k));
    // B keeps trying while master 2 is down.
    let secondAt = 0;
    const second = b.acquire(k, { waitMs: 15_000 }).then((lock) => ((secondAt = performance.now()), lock));
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 500));
    await masters.restart(2); // empty, but only after the lease: A's validity is over by now
    const restartedAt = performance.now();
    const { at: lostAt } = await lost;
    const lock = await second;
    expect(first.signal.reason).toBeInstanceOf(LockLostError);
    // A stopped trusting its lock (signal aborted) before B got it, and within its validity after the crash.
    expect(lostAt).toBeLessThanOrEqual(secondAt);
    expect(lostAt - crashedAt).toBeLessThan(leaseMs + 500);
    expect(lostAt).toBeLessThan(restartedAt);
    console.info(
      `redlock delayed restart: A lost ${Math.round(lostAt - crashedAt)} ms after the crash, B acquired ${Math.round(secondAt - crashedAt)} ms after it (restart at ${Math.round(restartedAt - crashedAt)} ms)`,
    );
    await lock.release();
  }, 30_000);

  it('mitigation: with an fsynced append-only file the restarted master still has the key, and nobody else gets the lock', async () => {
    const { masters, engines } = await setUp('aof');
    const a = await engines.create({ leaseMs: 30_000 });
    const b = await engines.create({ leaseMs: 30_000 });
    const k = key('aof');
    await staleKeyOn34(engines.storeKey(k));
    const first = await a.acquire(k);
    await masters.restart(2); // SIGKILL, then start again: reloads the AOF
    await dropStaleKeys(engines.storeKey(k));
    expect(await masters.countHolding(engines.storeKey(k))).toBe(3);
    // The clients reconnect to master 2 on their own; until then they see masters 0, 1, 3, 4 only.
    const ready = (engine: typeof a) => (engine.backend as RedlockBackend).connectionStates[2] === 'ready';
    await waitUntil('A and B to reach master 2 again', () => ready(a) && ready(b), 10_000, 20);
    for (let i = 0; i < 5; i++) expect(await b.tryAcquire(k)).toBeNull();
    await extendDecisively(first);
    expect(first.signal.aborted).toBe(false);
    await first.release();
    const second = await b.acquire(k, { waitMs: 5_000 });
    await second.release();
  }, 30_000);
});
