import { describe, expect, it } from '@jest/globals';
import { createLockBackend, LockBackendError, LockEngine } from '../../lib/index.js';
import type { BackendConfig } from '../../lib/backends/backend-options.js';
import { freePort } from '../harness/free-port.js';

// A store that cannot be reached: the LockBackendError names the address it tried (host:port),
// and never the password the connection string carries.

const SECRET = 'hunter2secret';

const stores: { name: string; config: (port: number) => BackendConfig }[] = [
  { name: 'redis', config: (port) => ({ type: 'redis', url: `redis://user:${SECRET}@127.0.0.1:${port}/0` }) },
  {
    name: 'redlock',
    config: (port) => ({
      type: 'redlock',
      urls: [
        `redis://:${SECRET}@127.0.0.1:${port}`,
        `redis://:${SECRET}@127.0.0.1:${port + 1}`,
        `redis://:${SECRET}@127.0.0.1:${port + 2}`,
      ],
    }),
  },
  {
    name: 'zookeeper',
    config: (port) => ({
      type: 'zookeeper',
      url: `127.0.0.1:${port}`,
      connectTimeoutMs: 1_000,
      auth: [{ scheme: 'digest', credentials: `u:${SECRET}` }],
    }),
  },
  {
    name: 'etcd',
    config: (port) => ({
      type: 'etcd',
      urls: `http://127.0.0.1:${port}`,
      requestTimeoutMs: 1_000,
      auth: { username: 'root', password: SECRET },
    }),
  },
  {
    name: 'postgres',
    config: (port) => ({ type: 'postgres', url: `postgres://postgres:${SECRET}@127.0.0.1:${port}/postgres` }),
  },
  { name: 'mysql', config: (port) => ({ type: 'mysql', url: `mysql://root:${SECRET}@127.0.0.1:${port}/test` }) },
];

describe.each(stores)('$name store unreachable', (store) => {
  it('the acquire error names host:port and not the password', async () => {
    const port = await freePort();
    const engine = new LockEngine(await createLockBackend(store.config(port)), { leaseMs: 2_000 });
    try {
      const error = await engine.acquire('address:k', { waitMs: 0 }).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(LockBackendError);
      const message = (error as Error).message;
      expect(message).toContain(`127.0.0.1:${port}`);
      expect(message).not.toContain(SECRET);
    } finally {
      await engine.close();
    }
  }, 20_000);
});
