import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { luaScript, runScriptBatched } from '../../lib/backends/redis/run-script.js';
import { RedisServer } from '../harness/redis-server.js';

// Echoes its argument, or fails when asked to: one reply per caller, in any batch.
const ECHO = luaScript(`
if ARGV[1] == 'fail' then return redis.error_reply('asked to fail') end
return ARGV[1]
`);

describe('redis scripts batched per tick', () => {
  let server: RedisServer;
  let client: Redis;
  let pipelines = 0;

  beforeAll(async () => {
    server = await RedisServer.start();
    client = new Redis(server.url);
    const pipeline = client.pipeline.bind(client);
    client.pipeline = (...args: Parameters<Redis['pipeline']>) => (pipelines++, pipeline(...args));
    await runScriptBatched(client, ECHO, [], ['warm-up']);
  }, 30_000);

  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  const run = (value: string) => runScriptBatched(client, ECHO, [], [value]);

  it('sends a lone script as it is, without a pipeline', async () => {
    pipelines = 0;
    await expect(run('alone')).resolves.toBe('alone');
    expect(pipelines).toBe(0);
  });

  it('sends the scripts of one tick as one pipeline, each caller getting its own reply or error', async () => {
    pipelines = 0;
    const values = Array.from({ length: 50 }, (_, i) => (i === 7 ? 'fail' : `v${i}`));
    const results = await Promise.allSettled(values.map(run));
    expect(pipelines).toBe(1);
    results.forEach((result, i) => {
      if (i === 7)
        expect(result).toMatchObject({
          status: 'rejected',
          reason: expect.objectContaining({ message: expect.stringContaining('asked to fail') }),
        });
      else expect(result).toEqual({ status: 'fulfilled', value: `v${i}` });
    });
  });

  it('falls back to EVAL for every script of a batch that the server no longer knows (NOSCRIPT)', async () => {
    await client.script('FLUSH');
    pipelines = 0;
    const values = Array.from({ length: 10 }, (_, i) => `after-flush-${i}`);
    await expect(Promise.all(values.map(run))).resolves.toEqual(values);
    expect(pipelines).toBe(1);
    await expect(run('cached again')).resolves.toBe('cached again');
  });
});
