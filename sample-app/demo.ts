import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { fireSales, percentile, type LoadResult } from './demo/load.js';
import { startInProcess, startProcess, type RunningApp } from './demo/instances.js';
import { startThrowawayRedis } from './demo/redis-for-demo.js';
import { collectJobTicks, type JobTicks } from './demo/job-ticks.js';

/**
 * The seed articles' flash sale: many concurrent purchases of one SKU, first through the locked
 * endpoint, then through the unguarded twin, and a report of what each did to the stock.
 *
 *   npm run demo                                   in-memory backend, one process
 *   npm run demo -- --redis [redis://host:port]    Redis backend, 3 app instances as separate processes
 *   options: --requests 300 --concurrency 60 --stock 100 --instances 3 --work-ms 2 (time between read and write)
 *            --job-seconds 7 (how long to watch the restock cron job, every 2 s on every instance) --json
 */
const { values: args } = parseArgs({
  options: {
    redis: { type: 'string' },
    instances: { type: 'string', default: '3' },
    requests: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '60' },
    stock: { type: 'string', default: '100' },
    'work-ms': { type: 'string', default: '2' },
    'job-seconds': { type: 'string', default: '7' },
    json: { type: 'boolean', default: false },
  },
  allowPositionals: false,
  strict: true,
  args: normaliseRedisFlag(process.argv.slice(2)),
});

interface StockWatcherLeadership {
  readonly leader?: { instance?: string; term?: number };
  readonly thisInstance: string;
}

interface Row extends LoadResult {
  readonly endpoint: string;
  readonly initialStock: number;
  readonly remaining: number;
  readonly oversold: number;
}

async function main(): Promise<void> {
  const requests = Number(args.requests);
  const concurrency = Number(args.concurrency);
  const stock = Number(args.stock);
  const useRedis = args.redis !== undefined;
  const throwaway = useRedis && args.redis === '' ? await startThrowawayRedis() : undefined;
  const redisUrl = throwaway?.url ?? args.redis;

  const apps: RunningApp[] = [];
  try {
    if (useRedis) {
      const env = { LOCK_BACKEND: 'redis', REDIS_URL: redisUrl!, WORK_MS: args['work-ms'] };
      apps.push(...(await Promise.all(Array.from({ length: Number(args.instances) }, () => startProcess(env)))));
    } else {
      apps.push(await startInProcess({ backend: { type: 'memory' }, workMs: Number(args['work-ms']) }));
    }
    const urls = apps.map((app) => `${app.url}/inventory`);
    const rows: Row[] = [];
    for (const endpoint of ['sale', 'sale-unguarded']) {
      const sku = `sku-${endpoint}-${Date.now()}`;
      await fetch(`${urls[0]}/${sku}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ stock }),
      });
      const result = await fireSales(urls, `/${sku}/${endpoint}`, requests, concurrency);
      const remaining = ((await (await fetch(`${urls[0]}/${sku}`)).json()) as { stock: number }).stock;
      rows.push({ ...result, endpoint, initialStock: stock, remaining, oversold: result.sold - (stock - remaining) });
    }
    const jobs = await collectJobTicks(
      apps.map((app) => app.url),
      Number(args['job-seconds']) * 1000,
    );
    const leadership = (await (
      await fetch(`${apps.at(-1)!.url}/leadership/stock-watcher`)
    ).json()) as StockWatcherLeadership;
    const setup = useRedis
      ? `redis backend, ${apps.length} app instances (separate processes) sharing ${redisUrl}`
      : 'memory backend, one process';
    if (args.json)
      console.log(
        JSON.stringify({
          setup,
          leader: leadership.leader,
          rows: rows.map(({ latenciesMs, ...row }) => ({
            ...row,
            p50: percentile(latenciesMs, 50),
            p99: percentile(latenciesMs, 99),
          })),
          jobs,
        }),
      );
    else {
      printReport(setup, requests, concurrency, rows);
      printJobs(jobs);
      const { leader } = leadership;
      console.log(
        `\nStock watcher (@OnLeadership('stock-watcher')): led by ${leader ? `${leader.instance} (term ${leader.term})` : 'nobody'}, asked from ${leadership.thisInstance}.`,
      );
    }
  } finally {
    await Promise.allSettled(apps.map((app) => app.stop()));
    throwaway?.stop();
  }
}

function printReport(setup: string, requests: number, concurrency: number, rows: Row[]): void {
  console.log(`\nFlash sale: ${requests} purchases, ${concurrency} at a time — ${setup}\n`);
  const header = [
    'endpoint',
    'requests',
    'sold',
    'sold out',
    '409 busy',
    'errors',
    'stock',
    'remaining',
    'oversold',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'req/s',
  ];
  const lines = rows.map((row) =>
    [
      `POST /inventory/:sku/${row.endpoint}`,
      row.requests,
      row.sold,
      row.soldOut,
      row.conflicts,
      row.errors,
      row.initialStock,
      row.remaining,
      row.oversold,
      percentile(row.latenciesMs, 50).toFixed(1),
      percentile(row.latenciesMs, 95).toFixed(1),
      percentile(row.latenciesMs, 99).toFixed(1),
      Math.round((row.requests / row.elapsedMs) * 1000),
    ].map(String),
  );
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i].length)));
  const format = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log(format(header));
  for (const line of lines) console.log(format(line));
  console.log('\noversold = items sold that the stock never had: sold - (stock - remaining).');
  for (const row of rows) console.log(`  ${row.endpoint}: ${verdict(row)}`);
}

function printJobs(jobs: JobTicks): void {
  console.log(
    `\nRestock cron job (every 2 s on every instance, @LockedJob minHoldMs 1 s), watched for ${jobs.ticks} ticks:`,
  );
  for (const instance of jobs.instances)
    console.log(`  ${instance.instance}: ran ${instance.ran} of them, skipped ${instance.skipped}`);
  console.log(
    `  ticks run exactly once: ${jobs.ranOnce}, more than once: ${jobs.ranMoreThanOnce}, not at all: ${jobs.missed}`,
  );
}

function verdict(row: Row): string {
  const sold =
    row.oversold === 0
      ? 'no oversell, every sale is accounted for'
      : `${row.oversold} items sold twice (lost updates between read and write)`;
  // Failed requests are not sales: say so rather than let "no oversell" stand alone.
  return row.errors === 0
    ? `${sold}.`
    : `${sold}, but ${row.errors} of ${row.requests} requests FAILED (5xx or no answer): see the app's log.`;
}

/** `--redis` alone means "start a throwaway redis-server". */
function normaliseRedisFlag(argv: string[]): string[] {
  return argv.flatMap((arg, i) =>
    arg === '--redis' && (argv[i + 1] === undefined || argv[i + 1].startsWith('--')) ? ['--redis='] : [arg],
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
