import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from './demo/instances.js';
import { startThrowawayRedis } from './demo/redis-for-demo.js';
import { Instance } from './deploy/instance.js';
import { buyUntil } from './deploy/purchases.js';

/**
 * A rolling deploy under load: the flash sale on `--instances` sample-app processes sharing one
 * Redis, buyers spread over them as a load balancer would, while each instance in turn is sent
 * SIGTERM (graceful shutdown: the HTTP server stops accepting, then the lock store drains) and
 * started again. Reports 5xx answers (by their `code`), oversold items and lost updates, and exits 1
 * if any is not 0. `--without-stop-accepting` leaves out the module's stopAcceptingOnShutdown, to show
 * what a deploy meets without it.
 *
 *   npm run test:deploy
 *   options: --instances 3 --concurrency 24 --work-ms 5 --settle-seconds 4 --redis redis://host:port --without-stop-accepting --json
 */
const { values: args } = parseArgs({
  options: {
    redis: { type: 'string' },
    instances: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '24' },
    'work-ms': { type: 'string', default: '5' },
    'settle-seconds': { type: 'string', default: '4' },
    'without-stop-accepting': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
  strict: true,
});

/** Stocks that sell out at different points of the run (early, late, never), so each phase has sales and sold-out answers. */
const STOCKS = { 'deploy-early': 300, 'deploy-late': 3_000, 'deploy-open': 1_000_000 } as const;

async function main(): Promise<void> {
  const throwaway = args.redis ? undefined : await startThrowawayRedis();
  const redisUrl = args.redis ?? throwaway!.url;
  const env = {
    LOCK_BACKEND: 'redis',
    REDIS_URL: redisUrl,
    WORK_MS: args['work-ms'],
    STOP_ACCEPTING: args['without-stop-accepting'] ? '0' : '1',
  };
  const instances = await Promise.all(
    Array.from({ length: Number(args.instances) }, async () => new Instance(await freePort(), env)),
  );
  const settleMs = Number(args['settle-seconds']) * 1000;
  const startedAt = performance.now();
  try {
    await Promise.all(instances.map((instance) => instance.start()));
    const skus = Object.keys(STOCKS).map((name) => `${name}-${Date.now()}`);
    for (const [i, stock] of Object.values(STOCKS).entries()) {
      await fetch(`${instances[0].url}/inventory/${skus[i]}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ stock }),
      });
    }
    let endLoad!: () => void;
    const loadEnds = new Promise<void>((resolve) => (endLoad = resolve));
    const buying = buyUntil(
      instances.map((instance) => instance.url),
      skus,
      Number(args.concurrency),
      loadEnds,
    );
    await delay(settleMs);
    for (const instance of instances) {
      await instance.stop();
      await instance.start();
      await delay(settleMs);
    }
    endLoad();
    const tally = await buying;
    const rows = await Promise.all(
      skus.map(async (sku, i) => {
        const initial = Object.values(STOCKS)[i];
        const remaining = ((await (await fetch(`${instances[0].url}/inventory/${sku}`)).json()) as { stock: number })
          .stock;
        const sold = tally.soldBySku[sku];
        // Acknowledged sales the stock does not show (two sales wrote over each other), and sales past the stock.
        return {
          sku,
          initial,
          sold,
          remaining,
          lostUpdates: sold - (initial - remaining),
          oversold: Math.max(0, sold - initial),
          unacknowledged: Math.max(0, initial - remaining - sold),
        };
      }),
    );
    const serverErrors = Object.values(tally.serverErrors).reduce((a, b) => a + b, 0);
    const oversold = rows.reduce((sum, row) => sum + row.oversold, 0);
    const lostUpdates = rows.reduce((sum, row) => sum + Math.max(0, row.lostUpdates), 0);
    const stops = instances.flatMap((instance) => instance.stops);
    const stopAccepting = !args['without-stop-accepting'];
    const report = {
      instances: instances.length,
      stopAccepting,
      seconds: Math.round((performance.now() - startedAt) / 1000),
      concurrency: Number(args.concurrency),
      ...tally,
      serverErrors,
      serverErrorsByStatus: tally.serverErrors,
      oversold,
      lostUpdates,
      rows,
      stops,
    };
    if (args.json) console.log(JSON.stringify(report));
    else printReport(report);
    // Nest's shutdown hooks end by sending the signal again to the process: exiting by SIGTERM is its normal end.
    const cleanExits = stops.every((stop) => stop.code === 0 || stop.signal === 'SIGTERM');
    if (
      serverErrors > 0 ||
      oversold > 0 ||
      lostUpdates > 0 ||
      !cleanExits ||
      rows.some((row) => row.unacknowledged > 0)
    ) {
      console.error(
        '\nFAILED: a rolling deploy must answer no 5xx, oversell nothing, lose no update, and every instance must end cleanly.',
      );
      for (const instance of instances)
        if (instance.log.trim()) console.error(`--- ${instance.url} output ---\n${instance.log.trim()}`);
      process.exitCode = 1;
    }
  } finally {
    await Promise.allSettled(instances.map((instance) => instance.stop()));
    throwaway?.stop();
  }
}

function printReport(report: {
  instances: number;
  stopAccepting: boolean;
  seconds: number;
  concurrency: number;
  sold: number;
  soldOut: number;
  busy: number;
  notConnected: number;
  serverErrors: number;
  serverErrorsByStatus: Record<number, number>;
  serverErrorsByCode: Record<string, number>;
  oversold: number;
  lostUpdates: number;
  rows: {
    sku: string;
    initial: number;
    sold: number;
    remaining: number;
    lostUpdates: number;
    unacknowledged: number;
  }[];
  stops: { code: number | null; signal: string | null; tookMs: number }[];
  errorSamples: string[];
}): void {
  const step = report.stopAccepting ? 'stopAcceptingOnShutdown' : 'without stopAcceptingOnShutdown';
  console.log(
    `\nRolling deploy: ${report.instances} instances on one Redis (${step}), ${report.concurrency} buyers, each instance sent SIGTERM and restarted in turn (${report.seconds} s)\n`,
  );
  console.log(
    `purchases answered: ${report.sold + report.soldOut + report.busy + report.serverErrors} (sold ${report.sold}, sold out ${report.soldOut}, 409 busy ${report.busy}, 5xx ${report.serverErrors})`,
  );
  console.log(`connections refused while an instance was down (sent to another instance): ${report.notConnected}`);
  for (const row of report.rows)
    console.log(
      `  ${row.sku}: stock ${row.initial}, sold ${row.sold}, remaining ${row.remaining}, lost updates ${row.lostUpdates}, sales without an answer ${row.unacknowledged}`,
    );
  console.log(
    `shutdowns: ${report.stops.map((stop) => `${stop.signal ?? `exit ${stop.code}`} after ${stop.tookMs} ms`).join(', ')}`,
  );
  const codes = Object.entries(report.serverErrorsByCode)
    .map(([code, count]) => `${code} ${count}`)
    .join(', ');
  console.log(
    `\n5xx answers: ${report.serverErrors}${codes ? ` (${codes})` : ''}  oversold: ${report.oversold}  lost updates: ${report.lostUpdates}`,
  );
  for (const sample of report.errorSamples) console.log(`  e.g. ${sample}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
