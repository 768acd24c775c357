import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockEngine, type Lock } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { waitUntil } from '../harness/server-process.js';
import { observeBackend } from '../support/observed-backend.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { ZkAdmin } from './zk-admin.js';

const WAITERS = 50;

/** Counts every attempt (each reads the lock's children once) and every busy answer. */
function countingBackend(backend: LockBackend, counts: { attempts: number; busy: number }): LockBackend {
  return observeBackend(backend, {
    attempted: (_request, result) => {
      counts.attempts++;
      if (!result.acquired) counts.busy++;
    },
  });
}

describe('zookeeper waiting without a herd effect', () => {
  const rootPath = `/ndl-herd-${randomUUID().slice(0, 8)}`;
  const engines: LockEngine[] = [];
  let server: ZookeeperServer;
  let admin: ZkAdmin;

  beforeAll(async () => {
    server = await ZookeeperServer.start();
    admin = await ZkAdmin.connect(server.connectionString);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    admin?.close();
    await server?.destroy();
  }, 30_000);

  it(`wakes exactly one of ${WAITERS} waiters per release: each waiter reads the queue once on arrival and once when its turn comes`, async () => {
    const k = `herd:${randomUUID().slice(0, 8)}`;
    const options = { type: 'zookeeper' as const, url: server.connectionString, sessionTimeoutMs: 6_000, rootPath };
    const counts = { attempts: 0, busy: 0 };
    const holderEngine = new LockEngine(await createLockBackend(options), { leaseMs: 10_000 });
    const waiterEngine = new LockEngine(countingBackend(await createLockBackend(options), counts), { leaseMs: 10_000 });
    engines.push(holderEngine, waiterEngine);

    const holder = await holderEngine.acquire(k);
    const order: number[] = [];
    let attemptsAtFirstGrant = 0;
    const waiters = Array.from({ length: WAITERS }, (_, i) =>
      waiterEngine.acquire(k, { waitMs: 60_000 }).then(async (lock: Lock) => {
        if (order.length === 0) attemptsAtFirstGrant = counts.attempts;
        order.push(i);
        await lock.release();
      }),
    );
    await waitUntil('every waiter to queue', () => counts.busy === WAITERS, 20_000);
    expect(counts.attempts).toBe(WAITERS);
    // No children watch: each waiter watches the node just ahead of it, and its own node (a holder
    // learns at once if its node is deleted behind its back). In one session those are the same
    // server-side watches: 51 nodes watched (holder + 50 waiters), plus the holder's own watch from its session.
    await waitUntil(
      "the waiters' watches",
      async () => /watching (\d+) paths/.exec(await server.fourLetter('wchs'))?.[1] === String(WAITERS + 1),
      10_000,
    );
    expect(await server.fourLetter('wchs')).toMatch(new RegExp(`Total watches:${WAITERS + 2}\\b`));

    const releasedAt = performance.now();
    await holder.release();
    await Promise.all(waiters);
    const handoffsMs = performance.now() - releasedAt;
    // The holder's release woke the first waiter only: one more read when it got the lock.
    expect(attemptsAtFirstGrant).toBe(WAITERS + 1);
    expect(order).toHaveLength(WAITERS);
    // One read on arrival, one when the predecessor left: nothing spurious over 50 hand-offs.
    expect(counts.attempts).toBe(2 * WAITERS);
    expect(counts.busy).toBe(WAITERS);
    console.log(
      `zookeeper herd: ${WAITERS} waiters, ${counts.attempts} queue reads in all; ${WAITERS} hand-offs in ${Math.round(handoffsMs)} ms (${(handoffsMs / WAITERS).toFixed(1)} ms each)`,
    );
  }, 60_000);
});
