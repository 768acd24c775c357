import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { RedisServer } from '../harness/redis-server.js';
import { canUseIptables } from './iptables.js';
import { canIsolate } from './port-isolation.js';
import { ALL_NEMESIS_FAULTS, LIBFAKETIME, runNemesis, type NemesisFault, type NemesisRun } from './nemesis-runner.js';
import { NEMESIS_STORES, type StartedStore } from './nemesis-stores.js';
import { formatNemesisTable } from './nemesis-table.js';
import { measureClockRate } from './store-clock.js';
import { driftAllowanceMs, furtherChecks, PENDING } from './further-checks.js';

/** One seed drives every run of a suite (NEMESIS_SEED to replay another); NEMESIS_ROUNDS faults per run (the long run: npm run test:nemesis). */
export const NEMESIS_SEED = Number(process.env.NEMESIS_SEED ?? 32);
const ROUNDS = Number(process.env.NEMESIS_ROUNDS ?? 1);
/** The long run (npm run test:nemesis): also the rows kept out of `npm test` for time (see each store's file). */
export const NEMESIS_LONG = process.env.NEMESIS_LONG === '1';
/** How long holder faults last (NEMESIS_FAULT_MS; default: the store's loss time x 1.2-1.7, seeded). */
const FAULT_MS = process.env.NEMESIS_FAULT_MS ? Number(process.env.NEMESIS_FAULT_MS) : undefined;
/** Holder faults: the canary (unguarded writes, trusting the lock) must show anomalies under them. */
const BITING: readonly NemesisFault[] = ['partition', 'partition replies', 'partition tcp', 'pause after acquire', 'pause before write', 'block loop', 'slow clock', 'store clock fast'];

/** Why `fault` cannot run on this machine, if it cannot. */
function unavailable(fault: NemesisFault): string | undefined {
  if (fault === 'partition tcp' && !canUseIptables()) return 'iptables needs root';
  if (fault.startsWith('isolate') && !canIsolate()) return 'isolating a member needs root, iptables and cgroup v2';
  if ((fault === 'slow clock' || fault === 'store clock fast') && !existsSync(LIBFAKETIME)) return `libfaketime is not installed (${LIBFAKETIME}: Debian package faketime)`;
  return undefined;
}

/**
 * The nemesis runs of one store: every fault in `faults`, each a seeded run of 3 clients (each
 * through its own proxy) with NEMESIS_ROUNDS injections, its history checked. Asserts no
 * violation, the canary's anomalies and the further checks (further-checks.ts); those held back
 * are asserted only with NEMESIS_PENDING=1, and listed otherwise.
 */
export function describeNemesis(storeName: string, faults: readonly NemesisFault[] = ALL_NEMESIS_FAULTS, expectedViolations: Partial<Record<NemesisFault, string>> = {}): void {
  describe(`nemesis: ${storeName}`, () => {
    let store: StartedStore;
    let resource: RedisServer;
    let dist: Awaited<ReturnType<typeof snapshotDist>>;
    const runs: NemesisRun[] = [];
    beforeAll(async () => {
      dist = await snapshotDist();
      resource = await RedisServer.start();
      store = await NEMESIS_STORES[storeName]!();
    }, 120_000);
    afterAll(async () => {
      if (runs.length > 0) process.stdout.write(`\nNemesis (${storeName}, seed ${NEMESIS_SEED}, ${ROUNDS} round(s)):\n${formatNemesisTable(runs)}\n`);
      await store?.stop();
      await resource?.stop();
      dist?.remove();
    }, 60_000);

    it.each(faults.map((fault) => [fault]))('%s', async (fault) => {
      const missing = unavailable(fault as NemesisFault);
      if (missing) return void process.stdout.write(`nemesis: "${fault}" on ${storeName} skipped: ${missing}\n`);
      if (fault === 'store clock fast') {
        // The row means something only if the server's clock does run fast.
        const rate = await measureClockRate(store);
        process.stdout.write(`nemesis: ${storeName}: the server's clock runs x${rate.toFixed(4)} (asked x${store.storeClockRate})\n`);
        expect(rate).toBeGreaterThan(1 + (store.storeClockRate! - 1) / 2);
      }
      const run = await runNemesis(store, fault as NemesisFault, { seed: NEMESIS_SEED, rounds: ROUNDS, dist: dist.url, resourceUrl: resource.url, faultMs: FAULT_MS, recoveryLimitMs: FAULT_MS ? 60_000 : undefined });
      runs.push(run);
      const { report } = run;
      expect(report.acquisitions).toBeGreaterThan(0);
      // Fenced writes: never a lost update or a stale write accepted, whatever the fault.
      expect(report.violations.filter((v) => v.kind.startsWith('guarded'))).toEqual([]);
      expect(report.violations.filter((v) => v.kind === 'fence-regression' || v.kind === 'release-by-non-holder' || v.kind === 'reentry-fence-changed')).toEqual([]);
      // No overlap, a late lost signal's and a slow clock's included: a holder's local lease ends a drift allowance before the store's.
      const overlaps = report.violations.filter((v) => v.kind === 'overlap');
      if (expectedViolations[fault as NemesisFault] === undefined) expect(overlaps).toEqual([]);
      // A holder cut off is told it lost the lock at least the drift allowance before the next holder gets it, counted from
      // its lease's local deadline (a timer a loaded event loop runs late is the machine's, not the library's; 1 ms: Date.now's resolution).
      // Under a slow clock the allowance absorbs the drift instead: there the check is no overlap.
      if (report.minDueLostMarginMs !== null && fault !== 'slow clock' && fault !== 'store clock fast' && expectedViolations[fault as NemesisFault] === undefined) expect(report.minDueLostMarginMs).toBeGreaterThanOrEqual(driftAllowanceMs(Number(report.meta.leaseMs)) - 1);
      if (BITING.includes(fault as NemesisFault)) {
        // The fault bit: the canary shows it, and the fence guard refused the stale holder's write.
        expect(report.canaryAnomalies).toBeGreaterThan(0);
        if (store.fenced !== false) expect(report.guardedRefused).toBeGreaterThan(0);
      }
      // Waits within waitMs + 250 ms, ZooKeeper's ride-through; the checks held back only with NEMESIS_PENDING=1.
      expect(furtherChecks(run, store).filter((check) => !check.passed && (PENDING || !check.heldBack))).toEqual([]);
    }, 300_000);
  });
}
