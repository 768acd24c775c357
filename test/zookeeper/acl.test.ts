import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomUUID } from 'node:crypto';
import {
  createLockBackend,
  LockBackendError,
  LockEngine,
  type LockEvent,
  type ZookeeperBackendOptions,
} from '../../lib/index.js';
import { zkErrorCode, ZK_ERROR } from '../../lib/backends/zookeeper/zk-driver.js';
import { lockParentPath } from '../../lib/backends/zookeeper/zk-paths.js';
import type { ZookeeperBackend } from '../../lib/backends/zookeeper/zookeeper-backend.js';
import { waitUntil } from '../harness/server-process.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { TcpProxy } from './tcp-proxy.js';
import { ZkAdmin } from './zk-admin.js';

const ALL = 31;
const READ = 1;
const password = `pw-${randomUUID()}`;
const credentials = `app:${password}`;
/** ZooKeeper's digest id for app:<password>, what `'creator'` expands to. */
const digestId = `app:${createHash('sha1').update(credentials).digest('base64')}`;
const auth = [{ scheme: 'digest', credentials }];

/** Errors of a raw client's operation, as ZooKeeper codes (0 = it succeeded). */
const codeOf = (operation: Promise<unknown>) =>
  operation.then(
    () => 0,
    (error: unknown) => zkErrorCode(error),
  );

describe('zookeeper auth and ACLs', () => {
  const run = randomUUID().slice(0, 8);
  // Two levels, so that mkdirp creates both with the ACL.
  const rootPath = `/ndl-acl-${run}/locks`;
  const keyPrefix = 'acl:';
  const key = (name: string) => `${name}:${randomUUID().slice(0, 8)}`;
  const engines: LockEngine[] = [];
  let server: ZookeeperServer;
  let proxy: TcpProxy;
  let admin: ZkAdmin;
  let stranger: ZkAdmin;

  async function newEngine(overrides: Partial<ZookeeperBackendOptions> = {}): Promise<LockEngine> {
    const options: ZookeeperBackendOptions = {
      type: 'zookeeper',
      url: server.connectionString,
      sessionTimeoutMs: 4_000,
      rootPath,
      auth,
      acl: 'creator',
      ...overrides,
    };
    const engine = new LockEngine(await createLockBackend(options), { keyPrefix, leaseMs: 4_000, waitMs: 10_000 });
    engines.push(engine);
    return engine;
  }
  const parentOf = (k: string, root = rootPath) => lockParentPath(root, keyPrefix + k);
  const nodePaths = async (k: string, root = rootPath) =>
    (await admin.lockNodes(root, keyPrefix + k)).map((name) => `${parentOf(k, root)}/${name}`);

  beforeAll(async () => {
    server = await ZookeeperServer.start();
    proxy = await TcpProxy.start(server.port);
    admin = await ZkAdmin.connect(server.connectionString, auth);
    stranger = await ZkAdmin.connect(server.connectionString);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    admin?.close();
    stranger?.close();
    await proxy?.close();
    await server?.destroy();
  }, 30_000);

  it("with acl 'creator', backends sharing the credentials exclude each other and hand over; every node they created carries the creator's digest id", async () => {
    const [a, b] = [await newEngine(), await newEngine()];
    const k = key('handover');
    const first = await a.acquire(k);
    expect(await b.tryAcquire(k)).toBeNull();
    const waiting = b.acquire(k);
    await waitUntil('the waiter to queue', async () => (await nodePaths(k)).length === 2);
    // The root levels came from mkdirp, the parent and first node from the multi, the waiter's node from a plain create.
    for (const path of [`/ndl-acl-${run}`, rootPath, parentOf(k), ...(await nodePaths(k))]) {
      expect({ path, acl: await admin.acl(path) }).toEqual({
        path,
        acl: [{ scheme: 'digest', id: digestId, permission: ALL }],
      });
    }
    await first.release();
    const second = await waiting;
    expect(second.fence!).toBeGreaterThan(first.fence!);
    await second.release();
  });

  it('keeps a client without the credentials from deleting the lock node or its parent, or even reading them (NO_AUTH)', async () => {
    const [a, b] = [await newEngine(), await newEngine()];
    const k = key('stranger');
    const lock = await a.acquire(k);
    const [node] = await nodePaths(k);
    expect(await codeOf(stranger.remove(node))).toBe(ZK_ERROR.NO_AUTH);
    expect(await codeOf(stranger.remove(parentOf(k)))).toBe(ZK_ERROR.NO_AUTH);
    expect(await codeOf(stranger.children(parentOf(k)))).toBe(ZK_ERROR.NO_AUTH);
    expect(await admin.stat(node)).toBeDefined();
    expect(lock.signal.aborted).toBe(false);
    expect(await b.tryAcquire(k)).toBeNull();
    await lock.release();
  });

  it('applies a custom ACL list: all for the digest id, read for anyone', async () => {
    const root = `/ndl-acl-custom-${run}`;
    const acl: ZookeeperBackendOptions['acl'] = [
      { scheme: 'digest', id: digestId, permissions: ['all'] },
      { scheme: 'world', id: 'anyone', permissions: ['read'] },
    ];
    const engine = await newEngine({ rootPath: root, acl });
    const k = key('custom');
    const lock = await engine.acquire(k);
    const expected = [
      { scheme: 'digest', id: digestId, permission: ALL },
      { scheme: 'world', id: 'anyone', permission: READ },
    ];
    for (const path of [root, parentOf(k, root), ...(await nodePaths(k, root))])
      expect(await admin.acl(path)).toEqual(expected);
    // Anyone may look at the queue, nobody else may change it.
    expect(await stranger.children(parentOf(k, root))).toHaveLength(1);
    expect(await codeOf(stranger.remove(parentOf(k, root)))).toBe(ZK_ERROR.NO_AUTH);
    await lock.release();
  });

  it('fails a backend with wrong credentials with LockBackendError at once (no wait, no crash, no password in the message)', async () => {
    const owner = await newEngine();
    const wrong = await newEngine({ auth: [{ scheme: 'digest', credentials: 'app:not-the-password' }] });
    const held = key('held');
    const lock = await owner.acquire(held);
    for (const k of [held, key('fresh')]) {
      const startedAt = performance.now();
      const error = await wrong.acquire(k, { waitMs: 10_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockBackendError);
      expect(String(error)).toMatch(/NO_AUTH.*check the auth and acl options/);
      expect(String(error)).not.toMatch(/not-the-password|pw-/);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
    }
    expect(await nodePaths(held)).toHaveLength(1);
    expect(lock.signal.aborted).toBe(false);
    await expect(wrong.backend.ping!()).resolves.toBeUndefined();
    await lock.release();
  });

  it('authenticates the session opened after an expiry too', async () => {
    const engine = await newEngine({ url: proxy.connectionString });
    const backend = engine.backend as ZookeeperBackend;
    const before = await engine.acquire(key('before-expiry'));
    const lost = new Promise<LockEvent>((resolve) =>
      engine.events.subscribe((event) => event.type === 'lost' && resolve(event)),
    );
    const old = backend.sessionCredentials()!;
    proxy.cut();
    await ZkAdmin.expireSession(server.connectionString, old);
    proxy.restore();
    await lost;
    expect(before.signal.aborted).toBe(true);
    // A new key: its parent is created under the creator-only root, which only an authenticated session may do.
    const k = key('after-expiry');
    const after = await engine.acquire(k, { waitMs: 0 });
    expect(backend.sessionCredentials()!.sessionId.equals(old.sessionId)).toBe(false);
    expect(await admin.acl(parentOf(k))).toEqual([{ scheme: 'digest', id: digestId, permission: ALL }]);
    await after.release();
  }, 30_000);

  it('fails at once with LockBackendError (AUTH_FAILED) when the server knows no such auth scheme, without opening session after session', async () => {
    const engine = await newEngine({
      auth: [{ scheme: 'no-such-scheme', credentials: 'x' }],
      acl: 'open',
      connectTimeoutMs: 5_000,
    });
    const startedAt = performance.now();
    const error = await engine.acquire(key('auth-failed')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockBackendError);
    expect(String(error)).toMatch(/AUTH_FAILED/);
    // Retrying in new sessions would go on until connectTimeoutMs.
    expect(performance.now() - startedAt).toBeLessThan(2_500);
  });
});
