import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createLockBackend, LockEngine, MemoryBackend } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { OpsServers, type OpsStore } from './ops-stores.js';

/**
 * Keys an attacker might choose, the same list on every store: if a store built a Lua script,
 * a SQL statement, a znode path or an etcd range out of key text, one of these would break out
 * (collide with another key, escape the lock's namespace, or fail).
 */
const HOSTILE_KEYS: readonly string[] = [
  `'"\`'; DROP TABLE distributed_locks; --`,
  `"]]) redis.call('FLUSHALL') --[[`,
  '\r\n*1\r\n$8\r\nFLUSHALL\r\n',
  'line 1\nline 2',
  'a/b/c',
  '/',
  '//',
  'trailing/',
  'a/../b',
  '.',
  '..',
  '../..',
  '/../../etc/passwd',
  '\\',
  '\\x00\\n',
  '%',
  '%2F',
  '%u0041',
  '{',
  '}',
  '{tag}:x',
  '*',
  '?',
  '[a-z]',
  '%_',
  '\u0000',
  'a\u0000b',
  '\u0007\u007f',
  ' ',
  'a ',
  '\t',
  'ключ-🔒-键',
  'caf\u00e9',
  'cafe\u0301',
  '\ud800',
  'k'.repeat(10_240),
  '/'.repeat(10_240),
  '🔒'.repeat(5_120),
  'x'.repeat(65_536),
];

const servers = new OpsServers();
let closeLater: LockEngine[] = [];

beforeAll(() => servers.start(), 60_000);
afterEach(async () => {
  await Promise.allSettled(closeLater.map((engine) => engine.close()));
  closeLater = [];
});
afterAll(() => servers.stop(), 60_000);

/** Three engines on one store, as three instances of an app; memory's share one in-process store. */
async function threeEngines(store: OpsStore): Promise<LockEngine[]> {
  const shared = new MemoryBackend();
  const backend = async (): Promise<LockBackend> =>
    store.name === 'memory'
      ? { name: 'memory', claim: (request) => shared.claim(request), close: async () => undefined }
      : createLockBackend(store.options());
  const engines = await Promise.all(
    [0, 1, 2].map(async () => new LockEngine(await backend(), { keyPrefix: 'hostile:', leaseMs: 20_000, waitMs: 0 })),
  );
  closeLater.push(...engines);
  return engines;
}

describe.each(servers.stores().map((store) => [store.name, store] as const))(
  'hostile keys on %s',
  (name, store: OpsStore) => {
    it('each is its own lock, exclusive across instances, and none disturbs another lock', async () => {
      const [a, b, c] = await threeEngines(store);
      const canary = await c.acquire('canary');

      // All at once from one instance: two keys that met in the store would make one of these busy.
      const held = [];
      for (const key of HOSTILE_KEYS) held.push(await a.acquire(key));
      for (const key of HOSTILE_KEYS) expect(await b.tryAcquire(key)).toBeNull();
      expect(new Set(held.map((lock) => lock.key)).size).toBe(HOSTILE_KEYS.length);
      expect(held.every((lock) => !lock.signal.aborted)).toBe(true);

      // Nothing escaped its key: the canary is still held, in the store as well as locally.
      expect(canary.signal.aborted).toBe(false);
      expect(await b.tryAcquire('canary')).toBeNull();

      await Promise.all(held.map((lock) => lock.release()));
      for (const [i, key] of HOSTILE_KEYS.entries()) {
        const again = await b.acquire(key);
        if (name !== 'redlock') expect(again.fence!).toBeGreaterThan(held[i].fence!); // redlock has no fences
        await again.release();
      }
      expect(canary.signal.aborted).toBe(false);
      await canary.release();
    }, 30_000);
  },
);
