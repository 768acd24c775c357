import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createLockBackend, LockBackendError, LockEngine, type ZookeeperBackendOptions } from '../../lib/index.js';
import { lockParentPath } from '../../lib/backends/zookeeper/zk-paths.js';
import { waitUntil } from '../harness/server-process.js';
import { startChildHolder } from '../support/child-holder.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { TcpProxy } from './tcp-proxy.js';
import { ZkAdmin } from './zk-admin.js';
import { withParentCleanupDelay } from '../support/internal-seams.js';

/** Lock nodes in the store: parents are cleaned up, a lost create answer leaves no orphan, any key is safe. */
describe('zookeeper lock nodes', () => {
  const rootPath = `/ndl-nodes-${randomUUID().slice(0, 8)}`;
  const keyPrefix = 'nodes:';
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
  const engines: LockEngine[] = [];
  let server: ZookeeperServer;
  let proxy: TcpProxy;
  let admin: ZkAdmin;

  async function newEngine(overrides: Partial<ZookeeperBackendOptions> = {}): Promise<LockEngine> {
    const options = {
      type: 'zookeeper',
      url: server.connectionString,
      sessionTimeoutMs: 6_000,
      rootPath,
      ...overrides,
    } as ZookeeperBackendOptions;
    const engine = new LockEngine(await createLockBackend(options), { keyPrefix, leaseMs: 5_000, waitMs: 10_000 });
    engines.push(engine);
    return engine;
  }
  const nodesOf = (k: string) => admin.lockNodes(rootPath, keyPrefix + k);
  const parentOf = (k: string) => lockParentPath(rootPath, keyPrefix + k);

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

  describe('parent nodes', () => {
    it('are deleted soon after nobody holds or waits, and fences keep increasing after one is re-created', async () => {
      const engine = await newEngine();
      const k = key('parent');
      const first = await engine.acquire(k);
      expect(await admin.stat(parentOf(k))).toBeDefined();
      await first.release();
      await waitUntil(
        'the empty parent to be deleted',
        async () => (await admin.stat(parentOf(k))) === undefined,
        5_000,
      );
      const second = await engine.acquire(k);
      // A sequence number would restart at 0 under the new parent; the creation zxid does not.
      expect(second.fence!).toBeGreaterThan(first.fence!);
      await second.release();
    });

    it('never fail an acquirer that races the clean-up, and nothing is left behind', async () => {
      // Parents deleted right at release (not a second later), so that acquirers keep racing the clean-up.
      const immediate = withParentCleanupDelay<Partial<ZookeeperBackendOptions>>({}, 0);
      const racers = [await newEngine(immediate), await newEngine(immediate), await newEngine(immediate)];
      const keys = [key('race-a'), key('race-b')];
      let inside = 0;
      let overlaps = 0;
      await Promise.all(
        racers.flatMap((engine, r) =>
          Array.from({ length: 2 }, async (_, lane) => {
            for (let i = 0; i < 25; i++) {
              const k = keys[(r + lane + i) % keys.length];
              await engine.withLock(
                k,
                async () => {
                  if (k === keys[0] && ++inside > 1) overlaps++;
                  await new Promise(setImmediate);
                  if (k === keys[0]) inside--;
                },
                { waitMs: 20_000 },
              );
            }
          }),
        ),
      );
      expect(overlaps).toBe(0);
      await waitUntil(
        'every parent to be cleaned up',
        async () =>
          ((await admin.children(rootPath)) ?? []).every((name) => !keys.some((k) => parentOf(k).endsWith(name))),
        10_000,
      );
    }, 60_000);

    it('left by a process killed while holding the lock, are deleted by the next backend to start, not a held one', async () => {
      const [orphaned, held] = [key('orphan'), key('held')];
      const holder = await startChildHolder({
        backend: { type: 'zookeeper', url: server.connectionString, sessionTimeoutMs: 1_000, rootPath },
        key: orphaned,
        keyPrefix,
        leaseMs: 5_000,
      });
      const other = await newEngine();
      const lock = await other.acquire(held);
      await holder.kill('SIGKILL');
      await waitUntil(
        "the dead holder's session to expire",
        async () => (await nodesOf(orphaned)).length === 0,
        10_000,
      );
      // Nobody will delete it: its janitor died with its process.
      expect(await admin.stat(parentOf(orphaned))).toBeDefined();
      const next = await newEngine();
      await (await next.acquire(key('any'))).release();
      await waitUntil(
        'the orphaned parent to be deleted',
        async () => (await admin.stat(parentOf(orphaned))) === undefined,
        5_000,
      );
      expect(await nodesOf(held)).toHaveLength(1);
      await lock.release();
    }, 30_000);
  });

  describe('keys', () => {
    it('locks keys of any characters and length, each as its own lock', async () => {
      const [a, b] = [await newEngine(), await newEngine()];
      const keys = [
        'a/b',
        'a%2fb',
        'a%252fb',
        '.',
        '..',
        '/../',
        'zoo keeper',
        'päckchen 🔒',
        '\ud800 lone surrogate',
        '\u0000\u0007',
        'x'.repeat(65_536),
        `${'x'.repeat(65_535)}y`,
      ];
      const held = await Promise.all(keys.map((k) => a.acquire(k, { waitMs: 0 })));
      for (const k of keys) expect(await b.tryAcquire(k)).toBeNull();
      await Promise.all(held.map((lock) => lock.release()));
      for (const k of keys) await (await b.acquire(k, { waitMs: 0 })).release();
    }, 20_000);
  });

  describe('a create whose answer is lost', () => {
    it('is found again by its attempt id and becomes the lock node: no orphan', async () => {
      const engine = await newEngine({ url: proxy.connectionString });
      const k = key('lost-reply');
      await admin.mkdirp(parentOf(k)); // so that the next create is the lock node's
      const replyLost = proxy.loseNextCreateReply();
      const lock = await engine.acquire(k, { waitMs: 0 });
      await replyLost;
      const nodes = await nodesOf(k);
      expect(nodes).toHaveLength(1);
      expect(await admin.stat(`${parentOf(k)}/${nodes[0]}`)).toBeDefined();
      await lock.release();
      expect(await nodesOf(k)).toHaveLength(0);
    });

    it('is deleted after the reconnect when the acquisition gave up meanwhile', async () => {
      const engine = await newEngine({ url: proxy.connectionString, connectTimeoutMs: 1_000 });
      const other = await newEngine();
      const k = key('lost-reply-given-up');
      await (await engine.acquire(key('warm-up'))).release(); // connected before the fault
      await admin.mkdirp(parentOf(k)); // so that the next create is the lock node's
      const replyLost = proxy.loseNextCreateReply().then(() => proxy.cut());
      const attempt = engine.acquire(k, { waitMs: 0 }).catch((error: unknown) => error);
      await replyLost;
      expect(await attempt).toBeInstanceOf(LockBackendError);
      // The create did land: the node sits in the queue until its owner, reconnected, deletes it.
      expect(await nodesOf(k)).toHaveLength(1);
      expect(await other.tryAcquire(k)).toBeNull();
      proxy.restore();
      await waitUntil('the orphan to be deleted', async () => (await nodesOf(k)).length === 0, 10_000);
      await (await other.acquire(k, { waitMs: 0 })).release();
    }, 30_000);
  });

  describe('a connection broken in the middle of a reply', () => {
    it('reconnects with the same session: the torn reply is not read in front of the next connection, the lock is kept', async () => {
      const engine = await newEngine({ url: proxy.connectionString, connectTimeoutMs: 2_000 });
      const other = await newEngine();
      const k = key('torn-reply');
      const lock = await engine.acquire(k);
      let lost = 0;
      engine.events.subscribe((event) => (lost += event.type === 'lost' ? 1 : 0));
      for (let round = 0; round < 3; round++) {
        const torn = proxy.tearNextReply();
        // The next request's reply (the lookup of a free key) arrives cut short, then the connection closes.
        const attempt = engine.tryAcquire(key('during')).then(
          (during) => during?.release(),
          (error: unknown) => error,
        );
        await torn;
        await attempt;
        // Reconnected: the driver parsed the new handshake (a stale tail would make it garbage, or throw and kill the process).
        await waitUntil(
          'a renewal after the reconnect',
          () =>
            lock.extend().then(
              () => true,
              () => false,
            ),
          10_000,
          100,
        );
      }
      expect(lock.signal.aborted).toBe(false);
      expect(await other.tryAcquire(k)).toBeNull();
      await lock.release();
      await (await other.acquire(k, { waitMs: 0 })).release();
      expect(lost).toBe(0);
    }, 40_000);
  });
});
