import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLockBackend, LockBackendError, LockEngine, LockLostError } from '../../lib/index.js';
import { EtcdServer } from '../harness/etcd-server.js';
import { waitUntil } from '../harness/server-process.js';
import { startChildHolder } from '../support/child-holder.js';
import { CHILD_LEASE_TTL_SECONDS, EtcdFixture } from './etcd-target.js';
import { nextEvent } from '../support/next-event.js';

// Failures with a real etcd: crashed and paused holders, a revoked lease, etcd restarted, down and hung.
// Child holders import the built package: `npm test` builds it first.
const etcd = new EtcdFixture();
const keyPrefix = `fail:${randomUUID().slice(0, 8)}:`;
const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
const engines: LockEngine[] = [];
const since = (start: number) => Math.round(performance.now() - start);

async function newEngine(
  leaseTtlSeconds: number,
  options: { leaseMs?: number; requestTimeoutMs?: number } = {},
): Promise<LockEngine> {
  const extra = options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs };
  const engine = new LockEngine(await etcd.backend(leaseTtlSeconds, extra), {
    keyPrefix,
    leaseMs: options.leaseMs ?? 10_000,
    waitMs: 10_000,
  });
  engines.push(engine);
  return engine;
}

/** etcd answers the engine's backend again: its gRPC channel reconnects within a second of etcd being back (bounded backoff). */
async function reconnected(engine: LockEngine): Promise<number> {
  const startedAt = performance.now();
  await waitUntil('the etcd client to reconnect', async () => (await engine.backend.ping?.(), true), 3_000);
  return since(startedAt);
}

/** The state letter of a process in /proc (`T`: stopped), undefined once it is gone. */
function processState(pid: number | undefined): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
  } catch {
    return undefined;
  }
}

/** Rejects if `promise` has not settled after `ms` (so a missing event fails the test with a message). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)),
  );
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

beforeAll(() => etcd.start(), 30_000);

afterAll(async () => {
  await Promise.allSettled(engines.map((engine) => engine.close()));
  await etcd.stop();
}, 30_000);

describe('etcd: holder processes that crash or pause', () => {
  const ttlMs = CHILD_LEASE_TTL_SECONDS * 1000;

  it('frees the lock of a SIGKILLed holder process when its lease expires: not before, and within the TTL', async () => {
    const engine = await newEngine(10);
    const k = key('killed');
    const holder = await startChildHolder({
      backend: etcd.options(CHILD_LEASE_TTL_SECONDS),
      key: k,
      keyPrefix,
      leaseMs: 1_000,
    });
    const killedAt = performance.now();
    await holder.kill('SIGKILL');
    const next = await engine.acquire(k, { waitMs: 10_000 });
    const freedMs = since(killedAt);
    console.info(`etcd: SIGKILLed holder (lease TTL ${ttlMs} ms) freed its lock after ${freedMs} ms`);
    // Its last keepalive was at most TTL/3 before the kill, so the lease lasts at least 2/3 of the TTL.
    expect(freedMs).toBeGreaterThan(ttlMs / 2);
    expect(freedMs).toBeLessThan(ttlMs + 1_500);
    expect(next.fence!).toBeGreaterThan(holder.fence!);
    await next.release();
  }, 30_000);

  it('a holder process SIGSTOPped past the TTL loses the lock to a holder with a larger fence, and its signal aborts on SIGCONT', async () => {
    const engine = await newEngine(10);
    const k = key('paused');
    const holder = await startChildHolder({
      backend: etcd.options(CHILD_LEASE_TTL_SECONDS),
      key: k,
      keyPrefix,
      leaseMs: 1_000,
    });
    try {
      const pausedAt = performance.now();
      holder.process.kill('SIGSTOP');
      const next = await engine.acquire(k, { waitMs: 10_000 });
      const takenMs = since(pausedAt);
      expect(next.fence!).toBeGreaterThan(holder.fence!);
      const resumedAt = performance.now();
      holder.process.kill('SIGCONT');
      const event = await within(5_000, 'lost event from the resumed holder', holder.nextEvent());
      const abortedMs = since(resumedAt);
      console.info(
        `etcd: SIGSTOPped holder lost its lock to the next holder after ${takenMs} ms; after SIGCONT its signal aborted in ${abortedMs} ms`,
      );
      expect(event).toMatchObject({ event: 'lost' });
      expect(String(event.reason)).toContain('LockLostError');
      // The resumed holder cleaned up only its own key: the new holder keeps the lock.
      const [remaining] = await etcd.lockKeys(keyPrefix + k);
      expect(remaining.createRevision).toBe(next.fence);
      expect(next.signal.aborted).toBe(false);
      await next.release();
    } finally {
      holder.process.kill('SIGCONT');
      await holder.kill('SIGKILL');
    }
  }, 30_000);
});

describe('etcd: the lease', () => {
  it("aborts every held lock's signal when the lease is revoked behind the backend's back; later acquisitions get a new lease", async () => {
    const engine = await newEngine(3);
    const [k1, k2, k3] = [key('revoked-1'), key('revoked-2'), key('after')];
    const locks = [await engine.acquire(k1), await engine.acquire(k2)];
    const { lease } = (await etcd.lockKeys(keyPrefix + k1))[0];
    const revokedAt = performance.now();
    await etcd.client.leaseClient.leaseRevoke({ ID: lease });
    await within(
      5_000,
      'aborted signals',
      Promise.all(locks.map((lock) => new Promise((resolve) => lock.signal.addEventListener('abort', resolve)))),
    );
    console.info(`etcd: revoked lease noticed by both holders after ${since(revokedAt)} ms`);
    for (const lock of locks) expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    const after = await engine.acquire(k3, { waitMs: 0 });
    const [current] = await etcd.lockKeys(keyPrefix + k3);
    expect(current.lease).not.toBe(lease);
    await after.release();
    await expect(locks[0].release()).rejects.toBeInstanceOf(LockLostError);
  }, 20_000);
});

describe('etcd: the server restarts, goes down, hangs', () => {
  it.each([
    ['gracefully (SIGTERM)', false],
    ['after a crash (SIGKILL)', true],
  ])(
    'keeps a lock held across an etcd restart %s: same key, same fence, still exclusive',
    async (_how, crash) => {
      const holderEngine = await newEngine(10, { leaseMs: 30_000 });
      const other = await newEngine(10);
      const k = key('restart');
      const lock = await holderEngine.acquire(k);
      const restartedAt = performance.now();
      if (crash) await etcd.server.kill();
      await etcd.server.restart();
      const downMs = since(restartedAt);
      // A renewal after the restart went through: the store still has the lock for this holder.
      await within(15_000, 'renewal after the restart', nextEvent(holderEngine, 'extended'));
      expect(lock.signal.aborted).toBe(false);
      const [stored] = await etcd.lockKeys(keyPrefix + k);
      expect(stored.createRevision).toBe(lock.fence);
      expect(await other.tryAcquire(k)).toBeNull();
      console.info(
        `etcd: restart ${crash ? 'after SIGKILL' : 'after SIGTERM'} took ${downMs} ms; the held lock survived`,
      );
      await lock.release();
      const next = await other.acquire(k, { waitMs: 5_000 });
      expect(next.fence!).toBeGreaterThan(lock.fence!);
      await next.release();
    },
    40_000,
  );

  it("aborts the holder's signal when etcd stays down past the lease TTL, and frees the lock within the TTL once etcd is back", async () => {
    const ttlSeconds = 3;
    const holderEngine = await newEngine(ttlSeconds, { leaseMs: 30_000 });
    const k = key('down');
    const lock = await holderEngine.acquire(k);
    const lost = nextEvent(holderEngine, 'lost');
    const downAt = performance.now();
    await etcd.server.kill();
    await within(ttlSeconds * 1000 + 2_000, 'lost event while etcd is down', lost);
    const lostMs = since(downAt);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    // Never later than etcd itself could have expired the lease.
    expect(lostMs).toBeLessThanOrEqual(ttlSeconds * 1000 + 200);
    await etcd.server.restart();
    const backAt = performance.now();
    const other = await newEngine(10);
    const next = await other.acquire(k, { waitMs: 15_000 });
    const freedMs = since(backAt);
    console.info(
      `etcd: down ${since(downAt)} ms in all; holder signalled lost after ${lostMs} ms; lock free ${freedMs} ms after etcd came back`,
    );
    // etcd gives every lease a fresh TTL when it restarts; the holder no longer keeps it alive.
    expect(freedMs).toBeLessThan(ttlSeconds * 1000 + 2_500);
    expect(next.fence!).toBeGreaterThan(lock.fence!);
    await next.release();
    // The holder's backend works again, on a new lease.
    await reconnected(holderEngine);
    await (await holderEngine.acquire(key('after-down'), { waitMs: 5_000 })).release();
  }, 40_000);

  it('reports a hung etcd (SIGSTOP) as LockBackendError after requestTimeoutMs, and works again once it resumes', async () => {
    // A server of its own: the shared one was stopped and restarted by the tests above, and while it
    // was down another test file's server could take its freed port (an acquire then answered in 4 ms).
    const server = await EtcdServer.start();
    const engine = new LockEngine(
      await createLockBackend({ type: 'etcd', urls: server.url, leaseTtlMs: 10_000, requestTimeoutMs: 1_000 }),
      { keyPrefix, waitMs: 10_000 },
    );
    try {
      await reconnected(engine);
      await (await engine.acquire(key('warm-up'))).release();
      server.pause();
      await waitUntil('etcd to be stopped by SIGSTOP', async () => processState(server.pid) === 'T', 2_000);
      try {
        const startedAt = performance.now();
        const error = await engine.acquire(key('hung'), { waitMs: 5_000 }).catch((e: unknown) => e);
        const failedMs = since(startedAt);
        console.info(`etcd: hung server reported as ${(error as Error).name} after ${failedMs} ms`);
        expect(error).toBeInstanceOf(LockBackendError);
        expect(failedMs).toBeGreaterThanOrEqual(900);
        expect(failedMs).toBeLessThan(4_000);
      } finally {
        server.resume();
      }
      console.info(`etcd: the client answered again ${await reconnected(engine)} ms after SIGCONT`);
      await (await engine.acquire(key('resumed'), { waitMs: 5_000 })).release();
    } finally {
      await engine.close();
      await server.destroy();
    }
  }, 30_000);
});
