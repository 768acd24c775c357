import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  createLockBackend,
  LockEngine,
  LockLostError,
  type LockEvent,
  type ZookeeperBackendOptions,
} from '../../lib/index.js';
import type { ZookeeperBackend } from '../../lib/backends/zookeeper/zookeeper-backend.js';
import { waitUntil } from '../harness/server-process.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { startChildHolder } from '../support/child-holder.js';
import { TcpProxy } from './tcp-proxy.js';
import { ZkAdmin } from './zk-admin.js';

function collect(engine: LockEngine, type: LockEvent['type']): LockEvent[] {
  const events: LockEvent[] = [];
  engine.events.subscribe((event) => event.type === type && events.push(event));
  return events;
}

describe('zookeeper sessions', () => {
  const rootPath = `/ndl-session-${randomUUID().slice(0, 8)}`;
  const keyPrefix = 'session:';
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
  const engines: LockEngine[] = [];
  let server: ZookeeperServer;
  let proxy: TcpProxy;
  let admin: ZkAdmin;

  const options = (overrides: Partial<ZookeeperBackendOptions> = {}): ZookeeperBackendOptions => ({
    type: 'zookeeper',
    url: server.connectionString,
    sessionTimeoutMs: 4_000,
    rootPath,
    ...overrides,
  });
  async function newEngine(
    backendOptions: Partial<ZookeeperBackendOptions> = {},
    leaseMs = 4_000,
  ): Promise<LockEngine> {
    const engine = new LockEngine(await createLockBackend(options(backendOptions)), {
      keyPrefix,
      leaseMs,
      waitMs: 10_000,
    });
    engines.push(engine);
    return engine;
  }

  beforeAll(async () => {
    server = await ZookeeperServer.start();
    proxy = await TcpProxy.start(server.port);
    admin = await ZkAdmin.connect(server.connectionString);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    admin?.close();
    await proxy?.close();
    await server?.destroy();
  }, 30_000);

  it('on session expiry aborts every lock held in it with LockLostError, and later acquisitions get a new session', async () => {
    const engine = await newEngine({ url: proxy.connectionString });
    const backend = engine.backend as ZookeeperBackend;
    const other = await newEngine();
    const [k1, k2, k3] = [key('expiry-1'), key('expiry-2'), key('expiry-3')];
    const exclusive = await engine.acquire(k1);
    const reader = await engine.acquire(k2, { mode: 'read' });
    const blocker = await other.acquire(k3);
    const waiter = engine.acquire(k3, { waitMs: 20_000 });
    await waitUntil('the waiter to queue', async () => (await admin.lockNodes(rootPath, keyPrefix + k3)).length === 2);
    const lost = collect(engine, 'lost');
    const credentials = backend.sessionCredentials()!;

    // A partition: the client cannot reach the server while its session is ended behind its back.
    proxy.cut();
    await ZkAdmin.expireSession(server.connectionString, credentials);
    proxy.restore();

    await waitUntil('both held locks to be lost', () => lost.length === 2, 15_000);
    for (const lock of [exclusive, reader]) {
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(String(lock.signal.reason)).toMatch(/session ended/);
    }
    // The server deleted the expired session's nodes: the keys are free for others.
    await (await other.acquire(k1, { waitMs: 0 })).release();
    await (await other.acquire(k2, { mode: 'write', waitMs: 0 })).release();
    // The waiter queues again in a new session and gets the lock when it is released.
    await blocker.release();
    const handedOver = await waiter;
    expect(handedOver.fence!).toBeGreaterThan(blocker.fence!);
    expect(backend.sessionCredentials()!.sessionId.equals(credentials.sessionId)).toBe(false);
    await handedOver.release();
  }, 40_000);

  it('aborts the signal of a holder process paused past its session timeout once it resumes; the next holder has a larger fence', async () => {
    const k = key('paused');
    const engine = await newEngine();
    const holder = await startChildHolder({
      backend: options({ sessionTimeoutMs: 1_500 }),
      key: k,
      keyPrefix,
      leaseMs: 1_500,
    });
    try {
      holder.process.kill('SIGSTOP');
      const pausedAt = performance.now();
      const next = await engine.acquire(k, { waitMs: 15_000 });
      const freedMs = Math.round(performance.now() - pausedAt);
      // Freed by the server when the paused holder's session expired (1.5 s, checked every 0.5 s tick).
      expect(freedMs).toBeLessThan(6_000);
      expect(next.fence!).toBeGreaterThan(holder.fence!);
      const lostEvent = holder.nextEvent();
      holder.process.kill('SIGCONT');
      const resumedAt = performance.now();
      expect(await lostEvent).toMatchObject({ event: 'lost' });
      console.log(
        `zookeeper SIGSTOP: holder (session 1.5 s) paused, next holder in ${freedMs} ms; after SIGCONT its signal aborted in ${Math.round(performance.now() - resumedAt)} ms`,
      );
      expect(next.signal.aborted).toBe(false);
      await next.release();
    } finally {
      holder.process.kill('SIGCONT');
      await holder.kill();
    }
  }, 30_000);

  it('frees the lock of a SIGKILLed holder process when its session expires, not before', async () => {
    const k = key('killed');
    const engine = await newEngine();
    const holder = await startChildHolder({
      backend: options({ sessionTimeoutMs: 2_000 }),
      key: k,
      keyPrefix,
      leaseMs: 30_000,
    });
    try {
      await holder.kill('SIGKILL');
      const killedAt = performance.now();
      const next = await engine.acquire(k, { waitMs: 15_000 });
      const freedMs = Math.round(performance.now() - killedAt);
      // The connection closed with the process, but the server keeps the session (and its node) for its timeout.
      expect(freedMs).toBeGreaterThanOrEqual(1_500);
      expect(freedMs).toBeLessThan(2_000 + 2_000);
      expect(next.fence!).toBeGreaterThan(holder.fence!);
      console.log(`zookeeper SIGKILL: holder (session 2 s, lease 30 s) killed, next holder in ${freedMs} ms`);
      await next.release();
    } finally {
      await holder.kill();
    }
  }, 30_000);

  it('keeps a lock whose lease is far longer than the session, renewing before the session could lapse', async () => {
    const k = key('long-lease');
    const engine = await newEngine({ sessionTimeoutMs: 1_000 }, 60_000);
    const other = await newEngine();
    const extended = collect(engine, 'extended');
    const lock = await engine.acquire(k);
    // The lock is trusted for at most the session timeout (1 s) after each confirmation.
    expect(lock.expiresAt - Date.now()).toBeLessThanOrEqual(1_100);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(lock.signal.aborted).toBe(false);
    expect(extended.length).toBeGreaterThanOrEqual(3);
    expect(await other.tryAcquire(k)).toBeNull();
    await lock.release();
  }, 20_000);

  it('releases what a closed backend held and fails later calls with LockBackendError', async () => {
    const k = key('closed');
    const engine = await newEngine();
    const other = await newEngine();
    const lock = await engine.acquire(k);
    await engine.close();
    expect(lock.signal.aborted).toBe(true);
    await (await other.acquire(k, { waitMs: 0 })).release();
    await expect(engine.acquire(k)).rejects.toThrow(/shutting down|closed/);
  });
});
