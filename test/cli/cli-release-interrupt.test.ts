import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createLockBackend, LockEngine } from '../../lib/index.js';
import { RedisServer } from '../harness/redis-server.js';
import { RunningCli } from './run-cli.js';

let server: RedisServer;
let app: LockEngine;

beforeAll(async () => {
  server = await RedisServer.start();
  app = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }), {
    instance: 'web-1',
    leaseMs: 9_000,
  });
}, 30_000);
afterAll(async () => {
  await app?.close();
  await server?.stop();
});

it('Ctrl-C (SIGINT) at the release question answers no: exit 1, "not released", the lock still held', async () => {
  const lock = await app.acquire('interrupted:job');
  // Its stdin stays open: the question waits for an answer that never comes.
  const cli = new RunningCli(['release', 'interrupted:job', '--redis', server.url]);
  try {
    await cli.until('the question', (out) => out.includes('[y/N] '));
    const run = await cli.stop('SIGINT');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('not released\n');
    expect((await app.inspect('interrupted:job')).holders).toMatchObject([{ instance: 'web-1' }]);
  } finally {
    cli.kill();
    await lock.release();
  }
}, 30_000);
