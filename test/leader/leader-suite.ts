import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { snapshotDist } from '../faults/dist-snapshot.js';
import { runLeaderScenario, type LeaderTarget } from './leader-runner.js';

/** Random resigns last this long: a few seconds in `npm test`, 60 s with `npm run test:leader`. */
const RESIGN_MS = Number(process.env.LEADER_RESIGN_SECONDS ?? 4) * 1_000;
/** Graceful shutdowns of the leader (each measured): 2 in `npm test`, 10 with `npm run test:leader`. */
const SHUTDOWNS = Number(process.env.LEADER_SHUTDOWNS ?? 2);

export interface LeaderSetup {
  readonly name: string;
  start(): Promise<LeaderTarget>;
  stop(): Promise<void>;
}

/**
 * The leader-election run for one store (leader-runner.ts): three instance processes, random resigns,
 * graceful shutdowns, SIGKILL and SIGSTOP of the leader, a store restart and freeze. Prints the
 * report and keeps it in /tmp/ndl-leader-results/<store>.json.
 */
export function describeLeaderSuite(setup: LeaderSetup): void {
  describe(`leader election on ${setup.name} (3 processes)`, () => {
    let target: LeaderTarget;
    let dist: Awaited<ReturnType<typeof snapshotDist>> | undefined;
    beforeAll(async () => {
      dist = await snapshotDist();
      target = { ...(await setup.start()), dist: dist.url };
    }, 120_000);
    afterAll(async () => {
      await setup.stop();
      dist?.remove();
    }, 60_000);

    it(
      'one leader at a time with increasing terms; fast handover on shutdown; takeover after a crash or a pause, whose late writes are refused',
      async () => {
        const report = await runLeaderScenario(target, RESIGN_MS, SHUTDOWNS);
        process.stdout.write(`\nLeader election (${setup.name}): ${JSON.stringify(report)}\n`);
        mkdirSync('/tmp/ndl-leader-results', { recursive: true });
        writeFileSync(`/tmp/ndl-leader-results/${setup.name}.json`, JSON.stringify(report, null, 2));

        expect({
          sameTermConflicts: report.sameTermConflicts,
          nonIncreasingTerms: report.nonIncreasingTerms,
          overlaps: report.overlaps,
        }).toEqual({ sameTermConflicts: 0, nonIncreasingTerms: 0, overlaps: 0 });
        expect(report.moves).toBeGreaterThan(0);
        expect(report.observed.said).toEqual(report.observed.leading);
        expect(report.acceptedWrites).toBeGreaterThan(0);
        // Handed over by the release, not by the lease running out.
        for (const handover of report.shutdownHandoverMs) expect(handover).toBeLessThan(target.lossMs / 2);
        expect(report.killTermLarger).toBe(true);
        expect(report.killTakeoverMs).toBeLessThan(target.lossMs + 5_000);
        expect(report.pauseTakeoverMs).toBeLessThan(target.lossMs + 5_000);
        expect(report.pausedAbortReason).toBe('LockLostError');
        expect(report.lateWritesRefused).toBeGreaterThanOrEqual(1);
      },
      120_000 + RESIGN_MS + SHUTDOWNS * 5_000,
    );
  });
}
