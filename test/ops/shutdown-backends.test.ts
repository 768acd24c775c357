import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import {
  createLockBackend,
  DistributedLockError,
  DistributedLockModule,
  Locked,
  LockShuttingDownError,
  LockEngine,
  LockLostError,
  LockService,
  type BackendOptions,
  type Lock,
} from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { LOCK_ENGINE } from '../../lib/nest/lock-constants.js';
import { deferred } from '../nest/nest-test-kit.js';
import { quietResources, settleResources } from './open-resources.js';
import { OpsServers, type OpsStore } from './ops-stores.js';

/** A job that works until its lock's signal aborts, as a well-behaved long job passes `lock.signal` to its work. */
@Injectable()
class LongJob {
  readonly entered = deferred<Lock>();
  constructor(private readonly locks: LockService) {}

  @Locked('shutdown:{0}')
  async run(_id: string): Promise<string> {
    const lock = this.locks.current()!;
    this.entered.resolve(lock);
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    lock.signal.throwIfAborted(); // do not write what the lock protects once it is gone
    return 'finished';
  }
}

async function startApp(backend: BackendOptions): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    // No drain: the revocation every drain ends with, on every store (test/nest/graceful-shutdown.test.ts covers the drain).
    imports: [DistributedLockModule.forRoot({ backend, leaseMs: 30_000, waitMs: 0, gracefulShutdownTimeoutMs: 0 })],
    providers: [LongJob],
  }).compile();
  return moduleRef.init();
}

/** Whether a second engine on the same store gets each key at once (and lets it go again). */
async function takeAtOnce(engine: LockEngine, keys: string[]): Promise<boolean[]> {
  return Promise.all(
    keys.map(async (key) => {
      const lock = await engine.tryAcquire(key);
      await lock?.release();
      return lock !== null;
    }),
  );
}

const servers = new OpsServers();
const stores = servers.stores();
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
/** Closed after each test even when an assertion failed, so a failure does not leave clients open. */
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(() => servers.start(), 60_000);
afterAll(() => servers.stop(), 60_000);
beforeEach(() => {
  rejections.length = 0;
  process.on('unhandledRejection', onRejection);
});
afterEach(async () => {
  process.off('unhandledRejection', onRejection);
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

describe.each(stores.map((store) => [store.name, store] as const))('app.close() on %s', (name, store: OpsStore) => {
  it('releases held locks before closing its clients, ends the in-flight @Locked call with a typed error, leaves nothing open', async () => {
    const ids = [randomUUID(), randomUUID()];
    const keys = [`shutdown:${ids[0]}`, `shutdown:${ids[1]}`, `racing:${ids[0]}`];
    const baseline = await quietResources();
    const app = await startApp(store.options());
    cleanups.push(() => app.close());
    const engine = app.get<LockEngine>(LOCK_ENGINE);
    const moduleBackend = engine.backend;
    // The memory store lives in the module's backend object; any other store is reached by a client of its own.
    const probeBackend: LockBackend =
      name === 'memory'
        ? { name, claim: (request) => moduleBackend.claim(request), close: async () => undefined }
        : await createLockBackend(store.options());
    const probe = new LockEngine(probeBackend, { keyPrefix: engine.keyPrefix, leaseMs: 30_000, waitMs: 0 });
    cleanups.push(() => probe.close());

    const held = await app.get(LockService).acquire(keys[0]);
    const job = app.get(LongJob);
    const running = job.run(ids[1]);
    const outcome = running.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    const jobLock = await job.entered.promise;
    expect(await takeAtOnce(probe, keys.slice(0, 2))).toEqual([false, false]);

    // What another instance sees at the moment the module starts closing its clients.
    let atClientClose: boolean[] | undefined;
    const closeClients = moduleBackend.close.bind(moduleBackend);
    moduleBackend.close = async () => {
      atClientClose = await takeAtOnce(probe, keys);
      return closeClients();
    };
    // A call waiting for a busy lock (in its own async context, so not re-entrant), and an
    // acquisition whose first attempt is on its way to the store when the app closes.
    const waiting = app
      .get(LockService)
      .acquire(keys[0], { waitMs: 20_000 })
      .then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    await new Promise((resolve) => setTimeout(resolve, 50)); // let it take its place in the queue (ZooKeeper, etcd)
    const racing = app
      .get(LockService)
      .acquire(keys[2])
      .then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    await app.close();

    // Either it was granted before the close began (then released like any held lock) or it was refused.
    expect(await waiting).toEqual({ error: expect.any(LockShuttingDownError) });
    const raced = await racing;
    if ('value' in raced) expect(raced.value.signal.reason).toBeInstanceOf(LockLostError);
    else expect(raced.error).toBeInstanceOf(LockShuttingDownError);
    expect(atClientClose).toEqual([true, true, true]);
    expect(await takeAtOnce(probe, keys)).toEqual([true, true, true]);
    expect(held.signal.aborted).toBe(true);
    expect(jobLock.signal.reason).toBeInstanceOf(LockLostError);
    const settled = await outcome;
    expect('error' in settled && settled.error).toBeInstanceOf(DistributedLockError);
    expect((settled as { error: Error }).error.message).toMatch(/shut/);
    await expect(app.get(LockService).acquire(`other:${ids[0]}`)).rejects.toThrow(LockShuttingDownError);
    await expect(app.get(LockService).acquire(`other:${ids[0]}`)).rejects.toThrow(/shutting down/);
    await expect(job.run(ids[0])).rejects.toThrow(LockShuttingDownError);

    await probe.close(); // closes probeBackend too
    expect(await settleResources(baseline)).toEqual(baseline);
    expect(rejections).toEqual([]);
  }, 20_000);

  if (store.userClient) {
    it('leaves clients the user passed in open', async () => {
      const user = store.userClient!();
      try {
        const app = await startApp(user.options);
        cleanups.push(() => app.close());
        const key = `user-client:${randomUUID()}`;
        const held = await app.get(LockService).acquire(key);
        const other = new LockEngine(await createLockBackend(store.options()), { waitMs: 0 });
        cleanups.push(() => other.close());
        expect(await other.tryAcquire(key)).toBeNull();
        await app.close();
        expect(held.signal.aborted).toBe(true);
        await expect(user.works()).resolves.toBeUndefined();
        expect(await takeAtOnce(other, [key])).toEqual([true]);
        await other.close();
        expect(rejections).toEqual([]);
      } finally {
        await user.close();
      }
    }, 20_000);
  }
});
