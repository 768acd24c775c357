import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { runCli } from '../../lib/cli/cli.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/server-process.js';
import { RunningCli } from './run-cli.js';

const SEPARATOR = /^--- \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ---$/gm;
const CLEAR_SCREEN = '\u001b[H\u001b[2J';

let server: RedisServer;
let app: LockEngine;
let running: RunningCli[] = [];

function watchCli(args: string[]): RunningCli {
  const cli = new RunningCli(['list', ...args, '--watch', '--interval', '0.2', '--redis', server.url]);
  running.push(cli);
  return cli;
}

beforeAll(async () => {
  server = await RedisServer.start();
  app = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }), {
    instance: 'web-1',
    leaseMs: 9_000,
  });
}, 30_000);
afterEach(() => {
  for (const cli of running) cli.kill();
  running = [];
});
afterAll(async () => {
  await app?.close();
  await server?.stop();
});

describe('list --watch, its stdout a pipe', () => {
  it('prints a refresh after a separator line each interval, shows a lock taken meanwhile, and ends with 0 on SIGINT', async () => {
    const filter = `watch:${Math.random().toString(36).slice(2, 8)}:`;
    const cli = watchCli([filter]);
    await cli.until('a first refresh', (out) => out.includes('no locks held'));
    const lock = await app.acquire(`${filter}import`, { label: 'nightly import' });
    await cli.until('a refresh with the lock', (out) =>
      new RegExp(`^${filter}import\\s+exclusive\\s+web-1\\s+nightly import`, 'm').test(out),
    );
    const run = await cli.stop('SIGINT');
    await lock.release();
    // Ended by itself, with 0: the store's connection was closed (an open one would keep the process alive).
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).not.toContain('\u001b');
    const frames = run.stdout.split(SEPARATOR);
    expect(frames[0]).toBe('');
    expect(frames.length - 1).toBeGreaterThanOrEqual(2);
    expect(frames[1].trim()).toBe('no locks held');
    expect(frames.at(-1)).toMatch(/^\nKEY\s+MODE/);
  }, 30_000);

  it('--json prints one JSON document per line, and SIGTERM ends it with 0', async () => {
    const filter = `watch:${Math.random().toString(36).slice(2, 8)}:`;
    const lock = await app.acquire(`${filter}report`);
    const cli = watchCli([filter, '--json']);
    await cli.until('two refreshes', (out) => out.split('\n').length > 2);
    const run = await cli.stop('SIGTERM');
    await lock.release();
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines)
      expect(JSON.parse(line)).toMatchObject({ locks: [{ key: `${filter}report`, holders: [{ instance: 'web-1' }] }] });
  }, 30_000);
});

describe('list --watch when the store goes away', () => {
  it('ends with the store failure (address, "connection refused") and exit 1', async () => {
    const own = await RedisServer.start();
    const cli = new RunningCli(['list', '--watch', '--interval', '0.2', '--redis', own.url]);
    running.push(cli);
    try {
      await cli.until('a first refresh', (out) => out.includes('no locks held'));
      await own.stop();
      const run = await cli.ended;
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(`^error: redis store at 127\\.0\\.0\\.1:${own.port}: connection refused \\(`),
      );
    } finally {
      await own.stop();
    }
  }, 30_000);
});

describe('list --watch on a terminal', () => {
  it('clears the screen before each refresh; an abort (SIGINT in the bin) resolves 0 and closes the connection', async () => {
    const clients = () => server.cli('CLIENT', 'LIST').split('\n').length;
    await app.inspect('tty:app-connected'); // the app's own connection is up before counting
    const before = clients();
    const stdout = Object.assign(new PassThrough(), { isTTY: true });
    let out = '';
    const interrupted = new AbortController();
    stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.split(CLEAR_SCREEN).length > 2) interrupted.abort();
    });
    const code = await runCli(['list', 'tty:', '--watch', '--interval', '0.2', '--redis', server.url], {
      stdin: new PassThrough(),
      stdout,
      stderr: new PassThrough(),
      signal: interrupted.signal,
    });
    expect(code).toBe(0);
    const frames = out.split(CLEAR_SCREEN);
    expect(frames[0]).toBe('');
    for (const frame of frames.slice(1))
      expect(frame).toMatch(/^Every 0\.2s, \d{4}-\d\d-\d\dT[\d:.]+Z \(Ctrl-C to stop\)\n\nno locks held\n$/);
    await waitUntil('the CLI connection to close', () => clients() === before, 5_000);
  }, 30_000);
});
