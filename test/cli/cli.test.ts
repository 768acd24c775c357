import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLockBackend, LockEngine, LockLostError, type BackendOptions, type Lock } from '../../lib/index.js';
import { EtcdServer } from '../harness/etcd-server.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { RedisServer } from '../harness/redis-server.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { cli } from './run-cli.js';

interface Store {
  readonly name: string;
  start(): Promise<{ flags: string[]; options: BackendOptions; stop(): Promise<void> }>;
  /** The store flags with a wrong password, where the store's URL carries one (Redis: test/cli/cli-store-failures.test.ts). */
  wrongPassword?(flags: string[]): string[];
}

const stores: Store[] = [
  {
    name: 'redis',
    async start() {
      const server = await RedisServer.start();
      return { flags: ['--redis', server.url], options: { type: 'redis', url: server.url }, stop: () => server.stop() };
    },
  },
  {
    name: 'redlock',
    async start() {
      const masters = await RedisMasters.start(3);
      return {
        flags: ['--redlock', masters.urls.join(',')],
        options: { type: 'redlock', urls: masters.urls },
        stop: () => masters.stop(),
      };
    },
  },
  {
    name: 'postgres',
    async start() {
      const server = await PostgresServer.start();
      return {
        flags: ['--postgres', server.connectionString],
        options: { type: 'postgres', url: server.connectionString },
        stop: () => server.stop(),
      };
    },
  },
  {
    name: 'mysql',
    wrongPassword: ([flag, uri]) => [flag, uri.replace(/:[^:@/]+@/, ':wrong-pw@')],
    async start() {
      const server = await MariadbServer.start();
      return { flags: ['--mysql', server.uri], options: { type: 'mysql', url: server.uri }, stop: () => server.stop() };
    },
  },
  {
    name: 'etcd',
    async start() {
      const server = await EtcdServer.start();
      return { flags: ['--etcd', server.url], options: { type: 'etcd', urls: server.url }, stop: () => server.stop() };
    },
  },
  {
    name: 'zookeeper',
    async start() {
      const server = await ZookeeperServer.start();
      return {
        flags: ['--zookeeper', server.connectionString],
        options: { type: 'zookeeper', url: server.connectionString },
        stop: () => server.stop(),
      };
    },
  },
];

describe.each(stores)('the CLI on $name', (store) => {
  let flags: string[];
  let stop: () => Promise<void>;
  let app: LockEngine;
  let tenant: LockEngine;
  const prefix = `ops:${Math.random().toString(36).slice(2, 8)}:`;

  beforeAll(async () => {
    const started = await store.start();
    ({ flags, stop } = started);
    // The app whose locks the operator looks at: its own instance label, the default keyPrefix. A lease
    // long enough that a loaded machine (CLI processes starting meanwhile) does not make it lapse.
    app = new LockEngine(await createLockBackend(started.options), { instance: 'web-1', leaseMs: 9_000 });
    // Another app on the same store with its own keyPrefix module option.
    tenant = new LockEngine(await createLockBackend(started.options), {
      instance: 'tenant-1',
      keyPrefix: 'tenant-a:',
      leaseMs: 9_000,
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([app?.close(), tenant?.close()]);
    await stop?.();
  }, 60_000);

  it('lists held locks with their holder and age, as a table and as JSON', async () => {
    const before = Date.now();
    const locks = await Promise.all([
      app.acquire(`${prefix}report`, { label: 'nightly report' }),
      app.acquire(`${prefix}invoice:7`, { label: 'invoice 7' }),
    ]);
    const acquired = Date.now();
    const table = await cli(['list', prefix, ...flags]);
    const listedBy = Date.now();
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout).toMatch(/^KEY\s+MODE\s+INSTANCE\s+LABEL\s+FENCE\s+AGE\s+EXPIRES\s+WAITING/);
    const row = table.stdout
      .split('\n')
      .find((line) => line.startsWith(`${prefix}report `))!
      .split(/\s{2,}/);
    expect(row.slice(0, 4)).toEqual([`${prefix}report`, 'exclusive', 'web-1', 'nightly report']);
    // AGE: seconds since the acquisition (acquiredAt), at least the time the CLI took after it, at most the time since before it.
    expect(row[5]).toMatch(/^\d+\.\ds$/);
    expect(Number.parseFloat(row[5])).toBeGreaterThanOrEqual(0);
    expect(Number.parseFloat(row[5])).toBeLessThanOrEqual((listedBy - before) / 1000 + 0.05);
    const json = await cli(['list', prefix, '--json', ...flags]);
    const listed = JSON.parse(json.stdout) as {
      locks: { key: string; holders: { instance: string; label: string; acquiredAt: number }[] }[];
    };
    expect(listed.locks.map((info) => info.key).sort()).toEqual([`${prefix}invoice:7`, `${prefix}report`]);
    const holder = listed.locks.find((info) => info.key === `${prefix}invoice:7`)!.holders[0];
    expect(holder).toMatchObject({ instance: 'web-1', label: 'invoice 7' });
    expect(holder.acquiredAt).toBeGreaterThanOrEqual(before);
    expect(holder.acquiredAt).toBeLessThanOrEqual(acquired);
    await Promise.all(locks.map((lock) => lock.release()));
    expect((await cli(['list', prefix, ...flags])).stdout.trim()).toBe('no locks held');
  }, 60_000);

  it('list FILTER lists only the keys that start with FILTER', async () => {
    const locks = await Promise.all([
      app.acquire(`${prefix}order:1`),
      app.acquire(`${prefix}order:2`),
      app.acquire(`${prefix}orders-export`),
      app.acquire(`${prefix}invoice:1`),
    ]);
    const run = await cli(['list', `${prefix}order:`, '--json', ...flags]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { locks: { key: string }[] }).locks.map((info) => info.key).sort()).toEqual([
      `${prefix}order:1`,
      `${prefix}order:2`,
    ]);
    await Promise.all(locks.map((lock) => lock.release()));
  }, 60_000);

  it("--key-prefix names the app's keyPrefix: its keys are listed and inspected as its callers give them", async () => {
    const lock = await tenant.acquire(`${prefix}scoped`, { label: 'tenant job' });
    const listed = await cli(['list', prefix, '--key-prefix', 'tenant-a:', ...flags]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${prefix}scoped\\s+exclusive\\s+tenant-1\\s+tenant job`, 'm'));
    // With the default keyPrefix ('lock:') the tenant's lock is another key: not listed.
    expect((await cli(['list', prefix, ...flags])).stdout.trim()).toBe('no locks held');
    expect((await cli(['inspect', `${prefix}scoped`, '--key-prefix', 'tenant-a:', ...flags])).stdout).toContain(
      'tenant-1',
    );
    await lock.release();
  }, 60_000);

  it('a cursor that is not one of this store is a bad command line: exit 2 with the usage', async () => {
    const run = await cli(['list', '--cursor', 'garbage!', ...flags]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: .*cursor/);
    expect(run.stderr).toContain('Usage: nestjs-distributed-lock');
  }, 60_000);

  if (store.wrongPassword) {
    it('a wrong password names the address and authentication, exit 1', async () => {
      const run = await cli(['list', ...store.wrongPassword!(flags)]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^error: mysql store at 127\.0\.0\.1:\d+: authentication failed \(.*Access denied/);
      expect(run.stderr).not.toContain('wrong-pw');
    }, 60_000);
  }

  it('inspects one key; a label with terminal escapes is printed harmless', async () => {
    const lock = await app.acquire(`${prefix}inspected`, { label: 'evil \u001b[2J label' });
    const run = await cli(['inspect', `${prefix}inspected`, ...flags]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('web-1');
    expect(run.stdout).toContain('evil ?[2J label');
    expect(run.stdout).not.toContain('\u001b');
    await lock.release();
    expect((await cli(['inspect', `${prefix}inspected`, ...flags])).stdout.trim()).toBe(`${prefix}inspected: not held`);
  }, 60_000);

  it('asks before releasing: anything but yes leaves the lock alone; --yes frees it and the holder loses it', async () => {
    const key = `${prefix}stuck`;
    const lock: Lock = await app.acquire(key, { label: 'stuck import' });
    const lost = new Promise<unknown>((resolve) =>
      lock.signal.addEventListener('abort', () => resolve(lock.signal.reason), { once: true }),
    );
    const refused = await cli(['release', key, ...flags], 'n\n');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('Force-release');
    expect((await app.inspect(key)).held).toBe(true);
    const noAnswer = await cli(['release', key, ...flags], '');
    expect(noAnswer.code).toBe(1);
    const confirmed = await cli(['release', key, ...flags], 'y\n');
    expect(confirmed).toMatchObject({ code: 0 });
    expect(confirmed.stdout).toContain(`${key}: released`);
    expect(await lost).toBeInstanceOf(LockLostError);
    const again = await app.acquire(key);
    const forced = await cli(['release', key, '--yes', '--json', '--reason', 'deploy', ...flags]);
    expect(JSON.parse(forced.stdout)).toMatchObject({ key, released: true, evicted: [{ instance: 'web-1' }] });
    await again.release().catch(() => undefined);
  }, 60_000);
});
