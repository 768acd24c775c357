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
interface DemoJobs {
  ticks: number;
  ranOnce: number;
  ranMoreThanOnce: number;
  missed: number;
  instances: { instance: string; ran: number; skipped: number }[];
}

async function demo(
  ...args: string[]
): Promise<{ setup: string; leader?: { instance?: string; term?: number }; rows: DemoRow[]; jobs: DemoJobs }> {
  const { stdout } = await run(
    process.execPath,
    [
      '.build/sample-app/demo.js',
      '--json',
      '--requests',
      '60',
      '--concurrency',
      '20',
      '--stock',
      '20',
      '--work-ms',
      '10',
      ...args,
    ],
    { timeout: 60_000 },
  );
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
    expect(unguarded.oversold).toBeGreaterThan(0);
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
      expect(unguarded.oversold).toBeGreaterThan(0);
      // The restock cron job fires on all 3 instances every 2 s: each watched tick ran on exactly one.
      expect(report.jobs.ticks).toBeGreaterThanOrEqual(2);
      expect(report.jobs).toMatchObject({ ranOnce: report.jobs.ticks, ranMoreThanOnce: 0, missed: 0 });
      expect(report.jobs.instances).toHaveLength(3);
      // The per-instance lines count the same watched ticks as the summary (not everything since the app started):
      // the runs add up to the ticks, and no instance ran or skipped more ticks than were watched.
      const { ticks, instances } = report.jobs;
      expect(instances.reduce((sum, instance) => sum + instance.ran, 0)).toBe(ticks);
      for (const instance of instances) expect(instance.ran + instance.skipped).toBeLessThanOrEqual(ticks);
      // Each tick, the other instances' timers fired too and stood aside (at least one of the two).
      expect(instances.reduce((sum, instance) => sum + instance.skipped, 0)).toBeGreaterThanOrEqual(ticks);
    }, 60_000);
  });
});
