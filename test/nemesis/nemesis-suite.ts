import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { RedisServer } from '../harness/redis-server.js';
import { runNemesis, type NemesisFault, type NemesisRun } from './nemesis-runner.js';
import { NEMESIS_STORES, type StartedStore } from './nemesis-stores.js';
import { formatNemesisTable } from './nemesis-table.js';
import { RECOVERY_BOUND_MS, rowChecks, WAIT_GRACE_MS } from './row-checks.js';
import { planRow } from './row-plan.js';

/** One seed drives every run of a suite (NEMESIS_SEED to replay another); NEMESIS_ROUNDS faults per run (the long run: npm run test:nemesis). */
export const NEMESIS_SEED = Number(process.env.NEMESIS_SEED ?? 32);
const ROUNDS = Number(process.env.NEMESIS_ROUNDS ?? 1);
/** The long run (npm run test:nemesis): also the rows kept out of `npm test` for time (see each store's file). */
export const NEMESIS_LONG = process.env.NEMESIS_LONG === '1';
/** How long holder faults last (NEMESIS_FAULT_MS; default: the store's loss time x 1.2-1.7, seeded). */
const FAULT_MS = process.env.NEMESIS_FAULT_MS ? Number(process.env.NEMESIS_FAULT_MS) : undefined;

/** Every fault of a single-server store. */
export const ALL_NEMESIS_FAULTS: readonly NemesisFault[] = [
  'partition',
  'partition replies',
  'partition tcp',
  'pause after acquire',
  'pause before write',
  'block loop',
  'restart store',
  'slow clock',
];

export interface NemesisRows {
  /** Rows run only in the long run (npm run test:nemesis); `npm test` lists them as skipped. */
  readonly longOnly?: readonly NemesisFault[];
  /** Rows that may grant a lock twice, and why (documented): their overlaps and lost-signal margins are reported, not failed. */
  readonly overlapsExpected?: Partial<Record<NemesisFault, string>>;
}

/** What a row asserts, for its test's name (row-checks.ts has the checks themselves). */
export function rowTitle(fault: NemesisFault, overlapsExpected?: string): string {
  const claims = [
    overlapsExpected === undefined ? 'no lock granted twice' : `overlaps reported (${overlapsExpected})`,
    'fences and fenced writes hold',
  ];
  const cutsOne =
    fault.startsWith('partition') ||
    fault.startsWith('pause') ||
    fault === 'block loop' ||
    fault === 'slow clock' ||
    fault === 'store clock fast';
  if (cutsOne) claims.push('the canary shows the fault');
  if (fault.startsWith('partition') && overlapsExpected === undefined)
    claims.push(
      'the lease ends locally >= lease x 0.01 + 2 ms before the next holder (the lost signal itself, for a store across a network)',
    );
  if (fault === 'slow clock') claims.push("the client's clock measured slow");
  if (fault === 'store clock fast') claims.push("the store's clock measured fast");
  claims.push(`failed acquires answer by waitMs + ${WAIT_GRACE_MS} ms`);
  claims.push(
    cutsOne
      ? `the cut-off client hears from the store and acquires again within ${RECOVERY_BOUND_MS / 1000} s of the heal`
      : 'the lock is taken again after the fault',
  );
  if (fault === 'isolate leader' || fault === 'isolate member')
    claims.push("a holder again within the store's bound, if it has one");
  return `${fault}: ${claims.join('; ')}`;
}

/**
 * The nemesis rows of one store: each fault a seeded run of 3 clients (each through its own proxy)
 * with NEMESIS_ROUNDS injections, its history checked, every check of row-checks.ts asserted. A
 * row this machine cannot inject is skipped with its reason (and fails under CI=true, whose
 * machine has what the rows need: row-plan.ts).
 */
export function describeNemesis(
  storeName: string,
  faults: readonly NemesisFault[] = ALL_NEMESIS_FAULTS,
  { longOnly = [], overlapsExpected = {} }: NemesisRows = {},
): void {
  describe(`nemesis: ${storeName}`, () => {
    let store: StartedStore;
    let resource: RedisServer;
    let dist: Awaited<ReturnType<typeof snapshotDist>>;
    const runs: NemesisRun[] = [];
    beforeAll(async () => {
      dist = await snapshotDist();
      resource = await RedisServer.start();
      store = await NEMESIS_STORES[storeName]();
    }, 120_000);
    afterAll(async () => {
      if (runs.length > 0)
        process.stdout.write(
          `\nNemesis (${storeName}, seed ${NEMESIS_SEED}, ${ROUNDS} round(s)):\n${formatNemesisTable(runs, store, overlapsExpected)}\n`,
        );
      await store?.stop();
      await resource?.stop();
      dist?.remove();
    }, 60_000);

    for (const fault of faults) {
      itRow(fault, rowTitle(fault, overlapsExpected[fault]), longOnly.includes(fault), async () => {
        const run = await runNemesis(store, fault, {
          seed: NEMESIS_SEED,
          rounds: ROUNDS,
          dist: dist.url,
          resourceUrl: resource.url,
          faultMs: FAULT_MS,
          recoveryLimitMs: FAULT_MS ? 60_000 : undefined,
        });
        runs.push(run);
        if (run.clientClockRate !== undefined)
          process.stdout.write(
            `nemesis: ${storeName}: the slow client's clock ran x${run.clientClockRate.toFixed(4)}\n`,
          );
        if (run.storeClockRate !== undefined)
          process.stdout.write(
            `nemesis: ${storeName}: the server's clock ran x${run.storeClockRate.toFixed(4)} (asked x${store.storeClockRate})\n`,
          );
        expect(rowChecks(run, store, overlapsExpected[fault]).filter((check) => !check.passed)).toEqual([]);
      });
    }
  });
}

/** Registers one row as planned (row-plan.ts): run, skipped with its reason in the name, or failing at once with it. */
export function itRow(
  fault: NemesisFault,
  title: string,
  longOnly: boolean,
  body: () => Promise<void>,
  timeoutMs = 300_000,
): void {
  const plan = planRow(fault, { long: NEMESIS_LONG, longOnly });
  if (plan.run) return void it(title, body, timeoutMs);
  if (plan.skip) return void it.skip(`${title} [skipped: ${plan.reason}]`, () => undefined);
  it(title, () => {
    throw new Error(
      `cannot inject "${fault}": ${plan.reason} (CI=true: scripts/install-servers.sh installs it and CI runs as root)`,
    );
  });
}
