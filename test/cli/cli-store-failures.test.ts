import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../harness/free-port.js';
import { RedisServer } from '../harness/redis-server.js';
import { cli } from './run-cli.js';

/** A store failure: exit 1, one line on stderr naming the store, never the usage. */
function expectStoreFailure(run: { code: number | null; stdout: string; stderr: string }, line: RegExp): void {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(line);
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).not.toContain('Usage');
}

describe('the CLI when nothing listens at the address: the store, its address and "connection refused", exit 1', () => {
  it.each([
    ['redis', (port: number) => ['--redis', `redis://127.0.0.1:${port}`]],
    ['postgres', (port: number) => ['--postgres', `postgres://locks:pw@127.0.0.1:${port}/locks`]],
    ['mysql', (port: number) => ['--mysql', `mysql://locks:pw@127.0.0.1:${port}/locks`]],
    ['etcd', (port: number) => ['--etcd', `http://127.0.0.1:${port}`]],
    ['zookeeper', (port: number) => ['--zookeeper', `127.0.0.1:${port}`]],
  ])(
    '%s',
    async (type, flags) => {
      const port = await freePort();
      expectStoreFailure(
        await cli(['list', ...flags(port)]),
        new RegExp(`^error: ${type} store at 127\\.0\\.0\\.1:${port}: connection refused \\(.*ECONNREFUSED`),
      );
    },
    30_000,
  );

  it('redlock: each master that refused is named', async () => {
    const ports = [await freePort(), await freePort()];
    const run = await cli(['list', '--redlock', ports.map((port) => `redis://127.0.0.1:${port}`).join(',')]);
    expectStoreFailure(
      run,
      new RegExp(
        `^error: redlock store at 127\\.0\\.0\\.1:${ports[0]}: connection refused \\(.*; at 127\\.0\\.0\\.1:${ports[1]}: connection refused \\(`,
      ),
    );
  }, 30_000);

  it('a host name that does not resolve is named with "host name not found (DNS)"', async () => {
    // .invalid never resolves (RFC 2606).
    const run = await cli(['inspect', 'k', '--redis', 'redis://no-such-host.invalid:6379']);
    expectStoreFailure(run, /^error: redis store at no-such-host\.invalid:6379: host name not found \(DNS\) \(/);
  }, 30_000);
});

describe('the CLI against a Redis that wants a password (requirepass)', () => {
  let server: RedisServer;
  const url = (credentials = '') => `redis://${credentials}127.0.0.1:${server.port}`;

  beforeAll(async () => {
    server = await RedisServer.start();
    server.cli('CONFIG', 'SET', 'requirepass', 'right-pw');
  }, 30_000);
  afterAll(() => server?.stop());

  it('no password: "authentication failed" and NOAUTH, with the address', async () => {
    expectStoreFailure(
      await cli(['list', '--redis', url()]),
      new RegExp(`^error: redis store at 127\\.0\\.0\\.1:${server.port}: authentication failed \\(NOAUTH`),
    );
  }, 30_000);

  it('a wrong password: "authentication failed" and WRONGPASS, the password never printed', async () => {
    const run = await cli(['list', '--redis', url(':wrong-pw@')]);
    expectStoreFailure(
      run,
      new RegExp(`^error: redis store at 127\\.0\\.0\\.1:${server.port}: authentication failed \\(WRONGPASS`),
    );
    expect(run.stderr).not.toContain('wrong-pw');
  }, 30_000);

  it('redlock with a wrong password: the master is named with "authentication failed" (its driver error says nothing of it)', async () => {
    const run = await cli(['list', '--redlock', url(':wrong-pw@')]);
    expectStoreFailure(
      run,
      new RegExp(`^error: redlock store at 127\\.0\\.0\\.1:${server.port}: authentication failed \\(WRONGPASS`),
    );
  }, 30_000);

  it('the right password lists (the failures above are the password, not the server)', async () => {
    expect(await cli(['list', '--redis', url(':right-pw@')])).toMatchObject({
      code: 0,
      stdout: 'no locks held\n',
      stderr: '',
    });
  }, 30_000);
});

describe('the CLI against a Redis that accepts connections but does not answer (SIGSTOP)', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await RedisServer.start();
    server.pause();
  }, 30_000);
  afterAll(() => server?.stop());

  it('"timed out", with the address', async () => {
    expectStoreFailure(
      await cli(['list', '--redis', server.url]),
      new RegExp(`^error: redis store at 127\\.0\\.0\\.1:${server.port}: timed out \\(`),
    );
  }, 30_000);
});
