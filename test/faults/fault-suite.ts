import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { snapshotDist } from './dist-snapshot.js';
import { faultRows, formatFaultTable, runFaultScenario, type Fault, type FaultTarget } from './fault-runner.js';

export const ALL_FAULTS: readonly Fault[] = [
  'kill holder',
  'pause holder',
  'block holder loop',
  'restart store',
  'freeze store',
];

export interface FaultSetup {
  readonly name: string;
  /** Starts the store's servers; resolves the target the scenarios run against. */
  start(): Promise<FaultTarget>;
  stop(): Promise<void>;
  /** Whether the store gives fences (then a stale holder's write must be refused by the resource). */
  readonly fenced: boolean;
}

/**
 * The fault-injection scenarios for one store: every fault, then the table of what was seen.
 * Each scenario: 3 processes x 2 workers on one key, a fault after 0.6 s, then on until 50 more
 * writes were accepted (the lock works again), 15 s at most.
 */
export function describeFaultSuite(setup: FaultSetup, faults: readonly Fault[] = ALL_FAULTS): void {
  describe(`${setup.name} under faults`, () => {
    let target: FaultTarget;
    let dist: Awaited<ReturnType<typeof snapshotDist>> | undefined;
    beforeAll(async () => {
      dist = await snapshotDist();
      target = { ...(await setup.start()), dist: dist.url };
    }, 120_000);
    afterAll(async () => {
      const rows = faultRows.filter((row) => row.backend === setup.name);
      if (rows.length > 0) {
        process.stdout.write(`\nFault table (${setup.name}):\n${formatFaultTable(rows)}\n`);
        mkdirSync('/tmp/ndl-fault-results', { recursive: true });
        writeFileSync(`/tmp/ndl-fault-results/${setup.name}.json`, JSON.stringify(rows, null, 2));
      }
      await setup.stop();
      dist?.remove();
    }, 60_000);

    it.each(faults.map((fault) => [fault]))(
      '%s: no lost update, no overlap, the lock keeps working',
      async (fault) => {
        const row = await runFaultScenario(target, fault);
        expect({ lostUpdates: row.lostUpdates, overlaps: row.overlaps }).toEqual({ lostUpdates: 0, overlaps: 0 });
        expect(row.operations).toBeGreaterThan(0);
        expect(row.progressAfterFault).toBeGreaterThanOrEqual(50);
        if (fault === 'pause holder' || fault === 'block holder loop') {
          // The stale holder's signal aborted, and its write was refused (fence) or not sent (lease check).
          expect(row.abortedHolders).toBeGreaterThanOrEqual(1);
          expect(
            setup.fenced ? row.refusedByFence : row.refusedByFence + row.skippedByLeaseCheck,
          ).toBeGreaterThanOrEqual(1);
        }
      },
      60_000,
    );
  });
}
