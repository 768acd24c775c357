import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { createLockBackend, LockBackendError, LockEngine, LockTimeoutError } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import type { BackendConfig } from '../../lib/backends/backend-options.js';
import { MIN_ATTEMPT_MS, RELEASE_TIMEOUT_MS, CLOSE_TIMEOUT_MS, WAIT_GRACE_MS, DEADLINE_TICK_MS } from '../../lib/engine/answer-deadlines.js';
import { BlackholeProxy } from '../harness/blackhole-proxy.js';
import { waitUntil } from '../harness/server-process.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisServer } from '../harness/redis-server.js';

// A client cut off from its store (a proxy that stops every byte, sockets left open) still hears
// within its bounds: waitMs (plus a small grace), a release within RELEASE_TIMEOUT_MS, close within
// its bounds; and an acquisition the store applies after its caller gave up is given back.

/** Sockets of this process connected to `port` and not yet destroyed (ended ones included: their FIN may never be acknowledged). */
function openSocketsTo(port: number): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((handle) => handle instanceof Socket && handle.remotePort === port && !handle.destroyed).length;
}

/** Timers and a loaded machine: how late an answer may come past its bound. */
const SLACK_MS = DEADLINE_TICK_MS + 400;
const since = (start: number) => performance.now() - start;
const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;

interface Store {
  readonly name: string;
  readonly port: () => number;
  readonly config: (address: string) => BackendConfig;
}

let redis: RedisServer;
let postgres: PostgresServer;
let mariadb: MariadbServer;
const stores: Store[] = [
  { name: 'redis', port: () => redis.port, config: (address) => ({ type: 'redis', url: `redis://${address}` }) },
  { name: 'postgres', port: () => postgres.port, config: (address) => ({ type: 'postgres', connectionString: `postgres://postgres@${address}/postgres` }) },
  { name: 'mysql', port: () => mariadb.port, config: (address) => ({ type: 'mysql', url: mariadb.uri.replace(`127.0.0.1:${mariadb.port}`, address) }) },
];

beforeAll(async () => {
  [redis, postgres, mariadb] = await Promise.all([RedisServer.start(), PostgresServer.start(), MariadbServer.start()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([redis?.stop(), postgres?.stop(), mariadb?.stop()]);
});

describe.each(stores)('$name cut off by a silent partition', (store) => {
  const opened: { engine: LockEngine; proxy: BlackholeProxy }[] = [];
  let direct: LockEngine;

  async function cutOffClient(): Promise<{ engine: LockEngine; proxy: BlackholeProxy; answeredBusy: Promise<void>; grants: (number | undefined)[] }> {
    const proxy = await BlackholeProxy.start(store.port());
    const { backend, answeredBusy, grants } = watchingBusy(await createLockBackend(store.config(proxy.address)));
    const engine = new LockEngine(backend, { leaseMs: 30_000 });
    // Connected, tables made: what follows measures the partition, not the first connection.
    await (await engine.acquire(key('warm-up'))).release();
    opened.push({ engine, proxy });
    return { engine, proxy, answeredBusy, grants };
  }

  beforeAll(async () => {
    direct = new LockEngine(await createLockBackend(store.config(`127.0.0.1:${store.port()}`)), { leaseMs: 30_000 });
  });

  afterAll(async () => {
    for (const { engine, proxy } of opened) {
      proxy.heal();
      await engine.close().catch(() => undefined);
      await proxy.close();
    }
    await direct.close();
  });

  it('acquire with waitMs 2000 rejects with LockBackendError naming the store within waitMs', async () => {
    const { engine, proxy } = await cutOffClient();
    proxy.partition();
    const startedAt = performance.now();
    const error = await engine.acquire(key('bounded'), { waitMs: 2_000 }).catch((e: unknown) => e);
    const tookMs = since(startedAt);
    expect(error).toBeInstanceOf(LockBackendError);
    expect((error as Error).message).toContain(`[${store.name}]`);
    expect(tookMs).toBeGreaterThanOrEqual(2_000);
    expect(tookMs).toBeLessThan(2_000 + WAIT_GRACE_MS + SLACK_MS);
  }, 20_000);

  it('tryAcquire gives the store MIN_ATTEMPT_MS, no more', async () => {
    const { engine, proxy } = await cutOffClient();
    proxy.partition();
    const startedAt = performance.now();
    await expect(engine.tryAcquire(key('try'))).rejects.toThrow(LockBackendError);
    expect(since(startedAt)).toBeLessThan(MIN_ATTEMPT_MS + SLACK_MS);
  }, 20_000);

  it('a waiter cut off after the store said busy times out as busy (LockTimeoutError) within waitMs', async () => {
    const { engine, proxy, answeredBusy } = await cutOffClient();
    const name = key('busy');
    const held = await direct.acquire(name);
    const startedAt = performance.now();
    const waiting = engine.acquire(name, { waitMs: 2_500 }).catch((e: unknown) => e);
    await answeredBusy;
    proxy.partition();
    await held.release();
    const error = await waiting;
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(since(startedAt)).toBeLessThan(2_500 + WAIT_GRACE_MS + SLACK_MS);
  }, 20_000);

  it('release() rejects with LockBackendError within RELEASE_TIMEOUT_MS; the store keeps the lease until it lapses', async () => {
    const { engine, proxy } = await cutOffClient();
    const lock = await engine.acquire(key('release'));
    proxy.partition();
    const startedAt = performance.now();
    await expect(lock.release()).rejects.toThrow(LockBackendError);
    expect(since(startedAt)).toBeLessThan(RELEASE_TIMEOUT_MS + SLACK_MS);
    expect(lock.signal.aborted).toBe(true);
  }, 20_000);

  it('close() gives up on the unreachable store within its bounds', async () => {
    const { engine, proxy } = await cutOffClient();
    await engine.acquire(key('held-at-close'));
    proxy.partition();
    void engine.acquire(key('in-flight-at-close'), { waitMs: 60_000 }).catch(() => undefined);
    const startedAt = performance.now();
    await engine.close();
    expect(since(startedAt)).toBeLessThan(CLOSE_TIMEOUT_MS + SLACK_MS);
    // Nothing of the client stays open long behind it (within the close bound again): a socket whose request never got an
    // answer would keep the process alive until TCP gives up (PostgreSQL did: pg-pool waits for a busy connection to come back).
    await waitUntil('every socket to the cut-off store closed', () => openSocketsTo(proxy.port) === 0, CLOSE_TIMEOUT_MS + SLACK_MS, 50);
  }, 30_000);

  it('an acquisition the store applies after its caller gave up is given back at once', async () => {
    const { engine, proxy, grants } = await cutOffClient();
    const name = key('late');
    const before = await direct.acquire(name);
    await before.release();
    proxy.partition();
    await expect(engine.acquire(name, { waitMs: 0 })).rejects.toThrow(LockBackendError);
    const grantsBefore = grants.length;
    proxy.heal();
    // close() waits for the give-back of the late answer.
    await engine.close();
    // The late attempt did reach the store and was granted (a fence between the two)...
    expect(grants.length).toBe(grantsBefore + 1);
    const late = grants.at(-1)!;
    expect(late).toBeGreaterThan(before.fence!);
    // ...and was freed: the key is free at once.
    const after = await direct.tryAcquire(name);
    expect(after).not.toBeNull();
    expect(after!.fence).toBeGreaterThan(late);
    await after!.release();
  }, 20_000);
});

/** `backend`, with a promise of its first attempt answered busy. */
function watchingBusy(backend: LockBackend): { backend: LockBackend; answeredBusy: Promise<void>; grants: (number | undefined)[] } {
  const grants: (number | undefined)[] = [];
  let answeredBusy!: () => void;
  const busy = new Promise<void>((resolve) => (answeredBusy = resolve));
  const watching: LockBackend = {
    name: backend.name,
    capabilities: backend.capabilities,
    ping: () => backend.ping!(),
    close: () => backend.close(),
    claim(request) {
      const claim = backend.claim(request);
      return {
        tryAcquire: async () => {
          const result = await claim.tryAcquire();
          if (!result.acquired) answeredBusy();
          else grants.push(result.fence);
          return result;
        },
        waitForChange: (maxMs, signal) => claim.waitForChange(maxMs, signal),
        renew: (leaseMs) => claim.renew(leaseMs),
        release: (holdMs) => claim.release(holdMs),
      };
    },
  };
  return { backend: watching, answeredBusy: busy, grants };
}
