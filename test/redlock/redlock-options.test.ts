import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLockBackend, InvalidLockArgumentError, LockEngine, type BackendOptions } from '../../lib/index.js';
import { RedisMasters } from '../harness/redis-masters.js';

const urls = ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3'];

/** Bad options are refused before any connection is opened. */
describe('redlock options', () => {
  const bad: [string, unknown][] = [
    ['neither urls nor clients', { type: 'redlock' }],
    ['both urls and clients', { type: 'redlock', urls, clients: [] }],
    ['an empty list', { type: 'redlock', urls: [] }],
    ['urls not an array', { type: 'redlock', urls: 'redis://127.0.0.1:1' }],
    ['the same master twice', { type: 'redlock', urls: [urls[0], urls[0], urls[1]] }],
    ['a URL that is not a string', { type: 'redlock', urls: [urls[0], 42, urls[1]] }],
    ['a URL that is not redis://', { type: 'redlock', urls: [urls[0], 'http://127.0.0.1:2', urls[2]] }],
    ['a URL that does not parse', { type: 'redlock', urls: [urls[0], 'not a url', urls[2]] }],
    ['a client that is not an ioredis client', { type: 'redlock', clients: [{}, {}, {}] }],
    [
      'a quorum of half the masters (two disjoint quorums)',
      { type: 'redlock', urls: [...urls, 'redis://127.0.0.1:4'], quorum: 2 },
    ],
    ['a quorum above the number of masters', { type: 'redlock', urls, quorum: 4 }],
    ['a fractional quorum', { type: 'redlock', urls, quorum: 2.5 }],
    ['a negative driftFactor', { type: 'redlock', urls, driftFactor: -0.1 }],
    ['a driftFactor of 1', { type: 'redlock', urls, driftFactor: 1 }],
    ['a NaN driftFactor', { type: 'redlock', urls, driftFactor: Number.NaN }],
    ['a zero nodeTimeoutMs', { type: 'redlock', urls, nodeTimeoutMs: 0 }],
    ['an infinite nodeTimeoutMs', { type: 'redlock', urls, nodeTimeoutMs: Number.POSITIVE_INFINITY }],
    ['a negative retryJitterMs', { type: 'redlock', urls, retryJitterMs: -1 }],
  ];

  it.each(bad)('%s → InvalidLockArgumentError', async (_name, options) => {
    await expect(createLockBackend(options as BackendOptions)).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  describe('on running masters', () => {
    let masters: RedisMasters;

    beforeAll(async () => {
      masters = await RedisMasters.start(3);
    }, 30_000);

    afterAll(async () => {
      await masters?.stop();
    }, 30_000);

    it("refuses mode 'read' with InvalidLockArgumentError (not supported by this backend)", async () => {
      const engine = new LockEngine(await createLockBackend({ type: 'redlock', urls: masters.urls }));
      await expect(engine.acquire('rw', { mode: 'read' })).rejects.toBeInstanceOf(InvalidLockArgumentError);
      const lock = await engine.acquire('rw', { mode: 'write', waitMs: 0 });
      await lock.release();
      await engine.close();
    });

    it('works with clients of the user, and leaves them open on close', async () => {
      const { Redis } = await import('ioredis');
      const clients = masters.urls.map((url) => new Redis(url));
      const engine = new LockEngine(await createLockBackend({ type: 'redlock', clients, quorum: 3 }));
      const lock = await engine.acquire('user-clients', { waitMs: 0 });
      expect(await masters.countHolding('{lock:user-clients}')).toBe(3);
      await lock.release();
      await engine.close();
      expect(await Promise.all(clients.map((client) => client.ping()))).toEqual(['PONG', 'PONG', 'PONG']);
      for (const client of clients) client.disconnect();
    });
  });
});
