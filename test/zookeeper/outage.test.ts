import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  createLockBackend,
  LockBackendError,
  LockEngine,
  LockLostError,
  type ZookeeperBackendOptions,
} from '../../lib/index.js';
import { waitUntil } from '../harness/server-process.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { nextEvent } from '../support/next-event.js';

/** The server goes down (SIGKILL) with a lock held, and comes back with its data (sessions survive a restart). */
describe('zookeeper server outage', () => {
  const rootPath = `/ndl-outage-${randomUUID().slice(0, 8)}`;
  const keyPrefix = 'outage:';
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
  const engines: LockEngine[] = [];
  let server: ZookeeperServer;

  async function newEngine(leaseMs: number, overrides: Partial<ZookeeperBackendOptions> = {}): Promise<LockEngine> {
    const options: ZookeeperBackendOptions = {
      type: 'zookeeper',
      url: server.connectionString,
      sessionTimeoutMs: 10_000,
      connectTimeoutMs: 500,
      rootPath,
      ...overrides,
    };
    const engine = new LockEngine(await createLockBackend(options), { keyPrefix, leaseMs, waitMs: 10_000 });
    engines.push(engine);
    return engine;
  }
  const extends_ = (engine: { extend(): Promise<void> }) => () =>
    engine.extend().then(
      () => true,
      () => false,
    );

  beforeAll(async () => {
    server = await ZookeeperServer.start();
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    await server?.destroy();
  }, 30_000);

  it('keeps the lock through a short outage: in doubt meanwhile (renewal fails), confirmed again after the restart', async () => {
    const k = key('short');
    const engine = await newEngine(10_000);
    const other = await newEngine(10_000, { connectTimeoutMs: 5_000 });
    const lock = await engine.acquire(k);
    await server.kill();
    const killedAt = performance.now();
    await expect(lock.extend()).rejects.toBeInstanceOf(LockBackendError);
    expect(lock.signal.aborted).toBe(false);
    await server.restart();
    const restartedAt = performance.now();
    await waitUntil('a renewal through the restarted server', extends_(lock), 8_000, 100);
    console.log(
      `zookeeper short outage: server down ${Math.round(restartedAt - killedAt)} ms (lease 10 s); renewed ${Math.round(performance.now() - restartedAt)} ms after the restart, lock kept`,
    );
    expect(lock.signal.aborted).toBe(false);
    expect(await other.tryAcquire(k)).toBeNull();
    await lock.release();
    await (await other.acquire(k, { waitMs: 0 })).release();
  }, 30_000);

  it('loses the lock (LockLostError) when the outage outlasts the lease, and deletes its node on reconnecting, long before the session would expire', async () => {
    const k = key('long');
    const engine = await newEngine(1_500);
    const other = await newEngine(10_000, { connectTimeoutMs: 5_000 });
    const lock = await engine.acquire(k);
    const lost = nextEvent(engine, 'lost');
    await server.kill();
    const killedAt = performance.now();
    await lost;
    const lostMs = Math.round(performance.now() - killedAt);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    await server.restart();
    const restartedAt = performance.now();
    // The session (10 s, restarted with the server) is still alive: only the holder's own clean-up frees the key this soon.
    const next = await other.acquire(k, { waitMs: 15_000 });
    const freedMs = Math.round(performance.now() - restartedAt);
    expect(freedMs).toBeLessThan(6_000);
    console.log(
      `zookeeper long outage: lease 1.5 s, signal aborted ${lostMs} ms after the server died; after the restart the key was free in ${freedMs} ms (session 10 s)`,
    );
    await next.release();
  }, 40_000);
});
