import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { RedisServer } from '../harness/redis-server.js';

const run = promisify(execFile);

interface DemoRow {
  endpoint: string;
  requests: number;
  sold: number;
  remaining: number;
  oversold: number;
  errors: number;
}

/** Runs the README's demo command (compiled sample app) and returns its JSON report. */
async function demo(...args: string[]): Promise<{ setup: string; leader?: { instance?: string; term?: number }; rows: DemoRow[] }> {
  const { stdout } = await run(process.execPath, ['.build/sample-app/demo.js', '--json', '--requests', '60', '--concurrency', '20', '--stock', '20', '--work-ms', '10', ...args], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

describe('the demo command (npm run demo)', () => {
  beforeAll(async () => {
    await run('npx', ['tsc', '-p', 'sample-app/tsconfig.json'], { timeout: 120_000 });
  }, 120_000);

  it('on the in-memory default: the locked endpoint never oversells, the unguarded one does', async () => {
    const report = await demo();
    expect(report.setup).toMatch(/memory/);
    const [locked, unguarded] = report.rows;
    expect(locked).toMatchObject({ endpoint: 'sale', sold: 20, remaining: 0, oversold: 0, errors: 0 });
    expect(unguarded!.oversold).toBeGreaterThan(0);
  }, 60_000);

  describe('on Redis with three app instances as separate processes', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await RedisServer.start();
    });
    afterAll(() => redis.stop());

    it('the locked endpoint never oversells, the unguarded one does', async () => {
      const report = await demo('--redis', redis.url, '--instances', '3');
      expect(report.setup).toMatch(/3 app instances/);
      // One of the three instances leads the stock watcher, as the instance asked (the last) reports.
      expect(report.leader).toEqual({ instance: expect.stringMatching(/:\d+$/), term: expect.any(Number) });
      const [locked, unguarded] = report.rows;
      expect(locked).toMatchObject({ endpoint: 'sale', sold: 20, remaining: 0, oversold: 0, errors: 0 });
      expect(unguarded!.oversold).toBeGreaterThan(0);
    }, 60_000);
  });
});
