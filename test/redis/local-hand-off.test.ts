import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLockBackend, LockEngine, LockTimeoutError, type Lock } from '../../lib/index.js';
import { Redis } from 'ioredis';
import { TURN_FENCES } from '../../lib/backends/redis/local-turn.js';
import type { RedisBackend } from '../../lib/backends/redis/redis-backend.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/server-process.js';
import { asleepOn } from '../support/internal-seams.js';

/**
 * Claims of one process (one backend) pass a plain lock between themselves without a round trip,
 * within a turn: fences reserved in Redis up front, bounded in fences and time, never past a loss.
 */
describe('redis backend: local hand-off between claims of one process', () => {
  let server: RedisServer;
  const engines: LockEngine[] = [];
  const evalshaCalls = () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(server.cli('INFO', 'commandstats'))?.[1] ?? 0);

  beforeAll(async () => {
    server = await RedisServer.start();
  }, 30_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    await server?.stop();
  });

  /** One engine per simulated process, each with its own backend (its own connections). */
  async function newProcess(options: { leaseMs?: number; waitMs?: number } = {}) {
    const backend = (await createLockBackend({ type: 'redis', url: server.url })) as RedisBackend;
    const engine = new LockEngine(backend, { leaseMs: 60_000, waitMs: 60_000, ...options });
    engines.push(engine);
    return { engine, asleep: (key: string) => asleepOn(backend, `lock:${key}`) };
  }

  it('passes the lock to the waiters of the process in arrival order, one fence each, without a round trip per hand-off', async () => {
    const one = await newProcess();
    const other = await newProcess();
    const first = await one.engine.acquire('passed');
    const fences: number[] = [];
    const waiters = Array.from({ length: 6 }, () =>
      one.engine.withLock('passed', (lock) => void fences.push(lock.fence!)),
    );
    await waitUntil('6 waiters asleep', () => one.asleep('passed') === 6, 10_000, 5);

    server.cli('CONFIG', 'RESETSTAT');
    await first.release();
    await Promise.all(waiters);

    // The first release went through Redis (no fences were reserved: nobody waited when it was taken), the
    // first waiter took the key reserving a turn's fences, and handed it on five times locally; the last
    // one freed the key: 3 scripts for 7 holds. A turn also ends after TURN_MS: on a machine slow enough
    // for that, the next waiter starts a new turn through Redis (its acquisition and the turn's release:
    // 2 scripts more), so the scripts are counted per turn, and within a turn the fences are consecutive.
    const turnStarts = fences.filter((fence, i) => i === 0 || fence !== fences[i - 1] + 1);
    expect(turnStarts.length).toBeLessThan(fences.length); // at least one hand-off without a round trip
    expect(evalshaCalls()).toBe(1 + 2 * turnStarts.length);
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
    expect(fences[0]).toBeGreaterThan(first.fence!);
    expect(server.cli('EXISTS', '{lock:passed}')).toBe('0');
    // The fence counter already covers the whole turn: another process's next holder comes after all of it.
    expect(Number(server.cli('GET', '{lock:passed}:fence'))).toBe(turnStarts.at(-1)! + TURN_FENCES - 1);
    const next = await other.engine.acquire('passed');
    expect(next.fence!).toBeGreaterThanOrEqual(turnStarts.at(-1)! + TURN_FENCES);
    await next.release();
  }, 30_000);

  it('lets a waiter of another process in after a bounded turn while the process keeps contending', async () => {
    const busy = await newProcess();
    const other = await newProcess();
    let stop = false;
    let localHolds = 0;
    const fences: number[] = [];
    const workers = Array.from({ length: 8 }, async () => {
      while (!stop && localHolds < 50_000) {
        await busy.engine.withLock('shared', (lock) => {
          localHolds++;
          fences.push(lock.fence!);
        });
      }
    });
    await waitUntil('the busy process contending', () => localHolds > 2 * TURN_FENCES, 10_000, 5);
    const asked = localHolds;
    const otherLock = await other.engine.acquire('shared');
    const holdsBeforeOther = localHolds - asked;
    stop = true;
    const otherFence = otherLock.fence!;
    await otherLock.release();
    await Promise.all(workers);

    // Every turn ends within TURN_FENCES hand-offs (or TURN_MS); the process that ends one stands back when
    // another listens. A few turns of slack for a loaded machine; without turns it would wait for all 50,000.
    expect(holdsBeforeOther).toBeLessThan(5 * TURN_FENCES);
    expect(fences.filter((fence) => fence < otherFence).length).toBeGreaterThan(0);
    expect(fences.every((fence) => fence !== otherFence)).toBe(true);
    expect(new Set(fences).size).toBe(fences.length);
  }, 30_000);

  it('shares a lock held through round trips between processes in turns, round robin: no process left behind', async () => {
    const processes = await Promise.all([newProcess(), newProcess(), newProcess()]);
    const counter = new Redis(server.url);
    const holds = processes.map(() => 0);
    const perProcessOrder: number[] = [];
    const target = 900;
    let total = 0;
    try {
      await Promise.all(
        processes.flatMap((process, p) =>
          Array.from({ length: 4 }, async () => {
            while (total < target) {
              await process.engine.withLock('shared-io', async () => {
                // The critical section does I/O, as real code does: each hold is a round trip long.
                await counter.incr('shared-io:count');
                holds[p]++;
                total++;
                perProcessOrder.push(p);
              });
            }
          }),
        ),
      );
    } finally {
      counter.disconnect();
    }

    // No update lost; every process gets about a third: a process whose turn ended stands back until
    // each of the others that listened had a turn (counted by their release announcements).
    expect(Number(server.cli('GET', 'shared-io:count'))).toBe(total);
    expect(Math.min(...holds) / Math.max(...holds)).toBeGreaterThan(0.5);
    // Turns stay bounded (TURN_FENCES holds) and go round: after a process's turn, the next two turns are the others'.
    const turns = perProcessOrder.filter((p, i) => i === 0 || p !== perProcessOrder[i - 1]);
    let longest = 0;
    for (let i = 0, run = 0; i < perProcessOrder.length; i++) {
      run = i > 0 && perProcessOrder[i] === perProcessOrder[i - 1] ? run + 1 : 1;
      longest = Math.max(longest, run);
    }
    expect(longest).toBeLessThanOrEqual(TURN_FENCES + 1);
    const roundRobin = turns.slice(2).filter((p, i) => p !== turns[i] && p !== turns[i + 1]).length;
    expect(roundRobin / Math.max(1, turns.length - 2)).toBeGreaterThan(0.8);
  }, 60_000);

  it('frees the lock when the waiter it was handed to gives up at that moment', async () => {
    const one = await newProcess();
    const other = await newProcess();
    const first = await one.engine.acquire('abandoned');
    const holderLock = one.engine.acquire('abandoned');
    await waitUntil('the next holder asleep', () => one.asleep('abandoned') === 1, 10_000, 5);
    const giveUp = new AbortController();
    const abandoned = one.engine.acquire('abandoned', { signal: giveUp.signal });
    await waitUntil('both waiters asleep', () => one.asleep('abandoned') === 2, 10_000, 5);
    await first.release();
    const holder = await holderLock;

    // The release hands the lock over synchronously; the receiver's signal aborts before it runs again.
    const released = holder.release();
    giveUp.abort(new Error('gave up'));
    await released;
    await expect(abandoned).rejects.toThrow('gave up');
    await waitUntil(
      'the handed-over lock freed in Redis',
      () => server.cli('EXISTS', '{lock:abandoned}') === '0',
      5_000,
    );
    const after = await other.engine.tryAcquire('abandoned');
    expect(after).not.toBeNull();
    expect(after!.fence!).toBeGreaterThan(holder.fence! + 1);
    await after!.release();
  }, 30_000);

  it('does not hand on a lock the turn lost: the waiter keeps waiting for the new owner', async () => {
    const one = await newProcess({ leaseMs: 300 });
    const other = await newProcess();
    const first = await one.engine.acquire('lost-turn');
    const holderLock = one.engine.acquire('lost-turn');
    await waitUntil('the next holder asleep', () => one.asleep('lost-turn') === 1, 10_000, 5);
    const waiter = one.engine.acquire('lost-turn', { waitMs: 1500 });
    await waitUntil('both waiters asleep', () => one.asleep('lost-turn') === 2, 10_000, 5);
    await first.release();
    const holder: Lock = await holderLock;

    // The key is taken from under the turn (as if it had lapsed): its next renewal finds it gone, and the
    // turn hands nothing on (its time is up by then too; the unit test pins the renewal's part).
    server.cli('DEL', '{lock:lost-turn}');
    const usurper = await other.engine.acquire('lost-turn');
    const lost = new Promise((resolve) => holder.signal.addEventListener('abort', resolve));
    await lost;

    await expect(waiter).rejects.toBeInstanceOf(LockTimeoutError);
    expect(server.cli('GET', '{lock:lost-turn}')).not.toBe('');
    await usurper.release();
  }, 30_000);
});
