import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createLockBackend, InvalidLockArgumentError, LockBackendError, LockEngine } from '../../lib/index.js';
import { redisConstructorOf, type IoredisModule } from '../../lib/backends/redis/redis-client.js';
import { freePort } from '../harness/free-port.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/server-process.js';

const connectedClients = (server: RedisServer) =>
  Number(/connected_clients:(\d+)/.exec(server.cli('INFO', 'clients'))![1]);
const subscribers = (server: RedisServer, channel: string) =>
  Number(server.cli('PUBSUB', 'NUMSUB', channel).split('\n')[1]);

describe('redis backend options and client ownership', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await RedisServer.start();
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
  });

  const bad: [string, unknown][] = [
    ['neither url nor client', { type: 'redis' }],
    ['both url and client', { type: 'redis', url: 'redis://127.0.0.1:1', client: new Redis({ lazyConnect: true }) }],
    ['url not a string', { type: 'redis', url: 6379 }],
    ['url not a URL', { type: 'redis', url: 'localhost:6379' }],
    ['url of another protocol', { type: 'redis', url: 'http://127.0.0.1:6379' }],
    ['client a plain object', { type: 'redis', client: {} }],
    ['client a string', { type: 'redis', client: 'redis://127.0.0.1' }],
    [
      'client from node-redis (evalSha, not evalsha)',
      { type: 'redis', client: { evalSha: () => undefined, duplicate: () => undefined, quit: () => undefined } },
    ],
  ];
  it.each(bad)('%s → InvalidLockArgumentError', async (_name, options) => {
    await expect(createLockBackend(options as never)).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  it('finds the Redis class in the ioredis namespace as ESM and as our CJS build see it', async () => {
    const namespace = (await import('ioredis')) as unknown as IoredisModule;
    expect(redisConstructorOf(namespace)).toBe(Redis);
    expect(redisConstructorOf({ Redis })).toBe(Redis); // named export
    expect(redisConstructorOf({ default: { Redis } })).toBe(Redis); // __importStar of module.exports
    expect(redisConstructorOf({ default: Redis })).toBe(Redis); // default = module.exports = the class
    expect(redisConstructorOf({})).toBeUndefined();
  });

  it("declares mode 'read' and fair claims; readers, writers and plain locks of a key are one lock", async () => {
    const backend = await createLockBackend({ type: 'redis', url: server.url });
    expect(backend.capabilities).toMatchObject({ read: true, fair: true });
    const engine = new LockEngine(backend);
    const read = await engine.acquire('read-mode', { mode: 'read', waitMs: 0 });
    expect(await engine.tryAcquire('read-mode', { mode: 'write' })).toBeNull();
    expect(await engine.tryAcquire('read-mode')).toBeNull();
    await read.release();
    const write = await engine.acquire('read-mode', { mode: 'write', fair: true, waitMs: 0 });
    expect(await engine.tryAcquire('read-mode')).toBeNull(); // 'write' and 'exclusive' are one lock
    expect(await engine.tryAcquire('read-mode', { mode: 'read', fair: true })).toBeNull();
    await write.release();
    await engine.close();
  });

  it('closes the client it created from a url, and its subscriber connection', async () => {
    const before = connectedClients(server);
    const engine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }));
    const held = await engine.acquire('owned', { leaseMs: 10_000 });
    const waiter = engine.acquire('owned', { waitMs: 10_000 }); // opens the subscriber
    await waitUntil('the waiter subscribed', () => subscribers(server, '{lock:owned}:released') === 1);
    expect(connectedClients(server)).toBe(before + 2);
    await held.release();
    await (await waiter).release();
    await engine.close();
    await waitUntil('both connections closed', () => connectedClients(server) === before, 5_000);
  });

  it('leaves a client the user passed open (and closes only the subscriber it duplicated)', async () => {
    const client = new Redis(server.url);
    await client.ping();
    const before = connectedClients(server);
    const engine = new LockEngine(await createLockBackend({ type: 'redis', client }));
    const held = await engine.acquire('user-client', { leaseMs: 10_000 });
    const waiter = engine.acquire('user-client', { waitMs: 10_000 });
    await waitUntil('the waiter subscribed', () => subscribers(server, '{lock:user-client}:released') === 1);
    expect(connectedClients(server)).toBe(before + 1); // the subscriber
    await held.release();
    await (await waiter).release();
    await engine.close();
    await waitUntil('the subscriber closed', () => connectedClients(server) === before, 5_000);
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    await client.quit();
  });

  it('ping() answers when the store is up, and rejects with LockBackendError when it is not', async () => {
    const up = await createLockBackend({ type: 'redis', url: server.url });
    await expect(up.ping!()).resolves.toBeUndefined();
    await up.close();
    const down = await createLockBackend({ type: 'redis', url: `redis://127.0.0.1:${await freePort()}` });
    const started = performance.now();
    await expect(down.ping!()).rejects.toBeInstanceOf(LockBackendError);
    expect(performance.now() - started).toBeLessThan(5_000);
    await down.close();
  });
});
