import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLockBackend, LockEngine, LockLostError, type BackendOptions, type Lock } from '../../lib/index.js';
import { EtcdServer } from '../harness/etcd-server.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { RedisServer } from '../harness/redis-server.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';

/** The built CLI, as `npx nestjs-distributed-lock` runs it (package.json `bin`). */
const CLI = fileURLToPath(new URL('../../dist/esm/cli/main.js', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[], input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

interface Store {
  readonly name: string;
  start(): Promise<{ flags: string[]; options: BackendOptions; stop(): Promise<void> }>;
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
      return { flags: ['--redlock', masters.urls.join(',')], options: { type: 'redlock', urls: masters.urls }, stop: () => masters.stop() };
    },
  },
  {
    name: 'postgres',
    async start() {
      const server = await PostgresServer.start();
      return { flags: ['--postgres', server.connectionString], options: { type: 'postgres', connectionString: server.connectionString }, stop: () => server.stop() };
    },
  },
  {
    name: 'mysql',
    async start() {
      const server = await MariadbServer.start();
      return { flags: ['--mysql', server.uri], options: { type: 'mysql', uri: server.uri }, stop: () => server.stop() };
    },
  },
  {
    name: 'etcd',
    async start() {
      const server = await EtcdServer.start();
      return { flags: ['--etcd', server.url], options: { type: 'etcd', hosts: server.url }, stop: () => server.stop() };
    },
  },
  {
    name: 'zookeeper',
    async start() {
      const server = await ZookeeperServer.start();
      return { flags: ['--zookeeper', server.connectionString], options: { type: 'zookeeper', connectionString: server.connectionString }, stop: () => server.stop() };
    },
  },
];

describe.each(stores)('the CLI on $name', (store) => {
  let flags: string[];
  let stop: () => Promise<void>;
  let app: LockEngine;
  const prefix = `ops:${Math.random().toString(36).slice(2, 8)}:`;

  beforeAll(async () => {
    const started = await store.start();
    ({ flags, stop } = started);
    // The app whose locks the operator looks at: its own instance label, the default keyPrefix. A lease
    // long enough that a loaded machine (CLI processes starting meanwhile) does not make it lapse.
    app = new LockEngine(await createLockBackend(started.options), { instance: 'web-1', leaseMs: 9_000 });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await stop?.();
  }, 60_000);

  it('lists held locks with their holder, as a table and as JSON', async () => {
    const locks = await Promise.all([app.acquire(`${prefix}report`, { label: 'nightly report' }), app.acquire(`${prefix}invoice:7`, { label: 'invoice 7' })]);
    const table = await cli(['list', prefix, ...flags]);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout).toMatch(/^KEY\s+MODE\s+INSTANCE\s+LABEL\s+FENCE\s+EXPIRES\s+WAITING/);
    expect(table.stdout).toMatch(new RegExp(`${prefix}report\\s+exclusive\\s+web-1\\s+nightly report`));
    const json = await cli(['list', prefix, '--json', ...flags]);
    const listed = JSON.parse(json.stdout) as { locks: { key: string; holders: { instance: string; label: string }[] }[] };
    expect(listed.locks.map((info) => info.key).sort()).toEqual([`${prefix}invoice:7`, `${prefix}report`]);
    expect(listed.locks.find((info) => info.key === `${prefix}invoice:7`)!.holders[0]).toMatchObject({ instance: 'web-1', label: 'invoice 7' });
    await Promise.all(locks.map((lock) => lock.release()));
    expect((await cli(['list', prefix, ...flags])).stdout.trim()).toBe('no locks held');
  }, 60_000);

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
    const lost = new Promise<unknown>((resolve) => lock.signal.addEventListener('abort', () => resolve(lock.signal.reason), { once: true }));
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

describe('the CLI without a store', () => {
  it('prints the usage and exits 2 on a bad command line', async () => {
    const run = await cli(['list']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('name the store');
    expect((await cli(['frobnicate', '--redis', 'redis://127.0.0.1:1'])).code).toBe(2);
    expect((await cli(['--help'])).stdout).toContain('Usage: nestjs-distributed-lock');
  });

  it('exits 1 with the error when the store is unreachable', async () => {
    const run = await cli(['list', '--redis', 'redis://127.0.0.1:1']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: /);
  }, 60_000);
});
