// The lock implementations under test, behind one small interface:
//   open(ctx) → { acquire(key, opts) → release(): Promise, close(), holdMany?(keys, leaseMs) }
// Every peer gets a plain `new Redis(url)` (ioredis defaults), as an application would create it.
// Every one is configured to wait long enough to finish workload 3 (32 workers, one key).
import { randomUUID } from 'node:crypto';
import { sleep } from './clock.mjs';
import { loadPackage } from './package-under-test.mjs';

const LEASE_MS = 10_000;
const WAIT_MS = 120_000;

async function ioredis(url, options = {}) {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, options);
  await client.ping();
  return client;
}

function ours(type) {
  return async ({ url }) => {
    const { LockEngine, createLockBackend } = await loadPackage();
    const backend = await createLockBackend(
      type === 'memory' ? { type: 'memory' } : type === 'etcd' ? { type, urls: url } : { type, url },
    );
    const engine = new LockEngine(backend, { leaseMs: LEASE_MS, waitMs: WAIT_MS });
    return {
      engine,
      async acquire(key, { leaseMs = LEASE_MS } = {}) {
        const lock = await engine.acquire(key, { leaseMs });
        return () => lock.release();
      },
      close: () => engine.close(),
    };
  };
}

/** The raw contender's release, for `client.defineCommand('casDel', COMPARE_AND_DELETE)`. */
export const COMPARE_AND_DELETE = {
  numberOfKeys: 1,
  lua: "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
};

// The two-round-trip floor: SET NX PX to take, a compare-and-delete script to release. A busy
// lock is polled every `retryMs` (it has no notion of waiting).
function raw(retryMs) {
  return async ({ url }) => {
    const client = await ioredis(url);
    client.defineCommand('casDel', COMPARE_AND_DELETE);
    return {
      async acquire(key, { leaseMs = LEASE_MS } = {}) {
        const token = randomUUID();
        while ((await client.set(key, token, 'PX', leaseMs, 'NX')) !== 'OK') await sleep(retryMs);
        return () => client.casDel(key, token);
      },
      close: () => client.quit(),
    };
  };
}

function redisSemaphore(retryInterval) {
  return async ({ url }) => {
    const { Mutex } = await import('redis-semaphore');
    const client = await ioredis(url);
    return {
      async acquire(key, { leaseMs = LEASE_MS } = {}) {
        const options = { lockTimeout: leaseMs, acquireTimeout: WAIT_MS, onLockLost: () => undefined };
        if (retryInterval !== undefined) options.retryInterval = retryInterval;
        // Its default refresh is every 0.8 x lockTimeout; a third of the lease, like ours, for workload 5.
        options.refreshInterval = Math.round(leaseMs / 3);
        const mutex = new Mutex(client, key, options);
        await mutex.acquire();
        return () => mutex.release();
      },
      close: () => client.quit(),
    };
  };
}

function redlock(retryDelay, retryJitter) {
  return async ({ url }) => {
    const { Redlock } = await import('@sesamecare-oss/redlock');
    const client = await ioredis(url);
    const settings = { retryCount: -1 }; // default 10 retries would fail workload 3
    if (retryDelay !== undefined) Object.assign(settings, { retryDelay, retryJitter });
    const redlock = new Redlock([client], settings);
    redlock.on('error', () => undefined);
    return {
      async acquire(key, { leaseMs = LEASE_MS } = {}) {
        const lock = await redlock.acquire([key], leaseMs);
        return () => lock.release();
      },
      close: () => client.quit(),
    };
  };
}

/** name → { open, label, note, store } */
export const CONTENDERS = {
  ours: { open: ours('redis'), store: 'redis', label: 'ours (redis)', note: 'this library, redis backend, LockEngine' },
  raw: {
    open: raw(10),
    store: 'redis',
    label: 'raw ioredis',
    note: 'SET NX PX + compare-and-delete script; polls every 10 ms when busy',
  },
  semaphore: {
    open: redisSemaphore(undefined),
    store: 'redis',
    label: 'redis-semaphore',
    note: 'Mutex, defaults (retryInterval 10 ms), acquireTimeout 120 s',
  },
  'semaphore-fast': {
    open: redisSemaphore(1),
    store: 'redis',
    label: 'redis-semaphore 1ms',
    note: 'Mutex, retryInterval 1 ms, acquireTimeout 120 s',
  },
  redlock: {
    open: redlock(undefined),
    store: 'redis',
    label: 'redlock',
    note: '@sesamecare-oss/redlock, one client, defaults (retryDelay 200 ms, jitter 100 ms), retryCount -1 (unbounded)',
  },
  'redlock-fast': {
    open: redlock(2, 2),
    store: 'redis',
    label: 'redlock 2ms',
    note: '@sesamecare-oss/redlock, one client, retryDelay 2 ms, jitter 2 ms, retryCount -1',
  },
  'ours-postgres': {
    open: ours('postgres'),
    store: 'postgres',
    label: 'ours (postgres)',
    note: 'this library, postgres backend, LockEngine',
  },
  'ours-mysql': {
    open: ours('mysql'),
    store: 'mysql',
    label: 'ours (mysql)',
    note: 'this library, mysql backend (MariaDB), LockEngine',
  },
  'ours-etcd': {
    open: ours('etcd'),
    store: 'etcd',
    label: 'ours (etcd)',
    note: 'this library, etcd backend, LockEngine',
  },
  'ours-memory': {
    open: ours('memory'),
    store: 'memory',
    label: 'ours (memory)',
    note: 'this library, memory backend (one process only): the engine cost without a store',
  },
};
