import { driftAllowanceMs } from './checker.mjs';
import type { NemesisFault, NemesisRun, NemesisStore } from './nemesis-runner.js';

// The documented figures, written here as numbers (docs/faults.md, What the library does under faults):
// a row that passed with the library's own constants would pass whatever they became.

/** `acquire()` answers by `waitMs` + this, whatever the store's own timeouts. */
export const WAIT_GRACE_MS = 100;
/** A client cut off from its store hears from it again, and acquires again, within this long of the heal. */
export const RECOVERY_BOUND_MS = 5_000;
/** `slow clock`: the slow client's clock rate (libfaketime), and how much of its slowness the row must see at least. */
export const SLOW_CLOCK_RATE = 0.995;
/** Holder faults: the canary (unguarded writes, trusting the lock) must show anomalies under them. */
const BITING: readonly NemesisFault[] = [
  'partition',
  'partition replies',
  'partition tcp',
  'partition shard',
  'pause after acquire',
  'pause before write',
  'block loop',
  'slow clock',
  'store clock fast',
];

export interface RowCheck {
  readonly name: string;
  readonly passed: boolean;
  readonly detail: string;
}

/**
 * Every check of one nemesis row, all asserted (nemesis-suite.ts fails the row on any that fails):
 * safety from the checker, the canary, the lost signal's margin, the waits' bound, the cut-off
 * client's recovery, and the availability bound of the stores that promise one. `overlapsExpected`:
 * why the row may grant a lock twice (documented): its overlaps and margins are reported, not failed.
 */
export function rowChecks(
  run: NemesisRun,
  store: Pick<NemesisStore, 'fenced' | 'unavailableBound'>,
  overlapsExpected?: string,
): RowCheck[] {
  const { report, fault } = run;
  const checks: RowCheck[] = [];
  const check = (name: string, passed: boolean, detail: string) => checks.push({ name, passed, detail });
  const ofKind = (...kinds: string[]) => report.violations.filter((v) => kinds.includes(v.kind));

  check('acquisitions', report.acquisitions > 0, `${report.acquisitions} acquisitions`);
  const stale = ofKind('guarded-lost-update', 'guarded-stale-write');
  check(
    'no lost update or stale write accepted by the fence guard',
    stale.length === 0,
    JSON.stringify(stale.slice(0, 3)),
  );
  const order = ofKind('fence-regression', 'release-by-non-holder', 'reentry-fence-changed');
  check('fences rise, only the holder releases', order.length === 0, JSON.stringify(order.slice(0, 3)));
  const overlaps = ofKind('overlap');
  if (overlapsExpected === undefined)
    check('no overlap', overlaps.length === 0, `${overlaps.length} overlap(s), longest ${report.longestOverlapMs} ms`);
  if (BITING.includes(fault)) {
    check(
      'the fault bit: the canary shows anomalies',
      report.canaryAnomalies > 0,
      `${report.canaryAnomalies} anomalies`,
    );
    if (store.fenced !== false)
      check(
        "the fence guard refused the stale holder's write",
        report.guardedRefused > 0,
        `${report.guardedRefused} refused`,
      );
  }
  // Under a slow client clock or a fast store clock the allowance is what absorbs the drift: there the check is no overlap.
  if (
    report.minLostMarginMs !== null &&
    report.minDueLostMarginMs !== null &&
    fault !== 'slow clock' &&
    fault !== 'store clock fast' &&
    overlapsExpected === undefined
  ) {
    const allowance = driftAllowanceMs(Number(report.meta.leaseMs));
    // From the lease's local deadline (the signal less how late the holder's event loop ran its timer; 1 ms: both read
    // Date.now()): what the library sets, whatever the machine's load.
    check(
      `the lease's local deadline is >= lease x 0.01 + 2 ms (${allowance} ms) before the next holder`,
      report.minDueLostMarginMs >= allowance - 1,
      `min margin ${report.minDueLostMarginMs} ms from the deadline`,
    );
    // From the signal itself, where the store is across a network (latencyMs): the timer's lateness included.
    if (Number(report.meta.latencyMs) > 0)
      check(
        `the lost signal fires >= lease x 0.01 + 2 ms (${allowance} ms) before the next holder, ${String(report.meta.latencyMs)} ms away`,
        report.minLostMarginMs >= allowance,
        `min margin ${report.minLostMarginMs} ms (timer up to ${report.longestLostLateMs} ms late)`,
      );
  }
  check(
    `an acquire that fails answers within waitMs + ${WAIT_GRACE_MS} ms`,
    report.acquiresPastWaitBound === 0,
    `${report.acquiresPastWaitBound} answered after a timer due then had run; longest failed acquire ${report.longestFailedAcquireMs} ms, waitMs ${String(report.meta.waitMs)}`,
  );
  for (const [i, r] of report.recoveries.entries()) {
    if (r.target === undefined) {
      check(
        `the lock is acquired again after heal ${i + 1}`,
        r.anyMs !== null,
        `next acquisition ${r.anyMs ?? 'never'} ms after`,
      );
      continue;
    }
    check(
      `the cut-off client hears from the store within ${RECOVERY_BOUND_MS} ms of heal ${i + 1}`,
      r.answerMs !== null && r.answerMs <= RECOVERY_BOUND_MS,
      `first answer ${r.answerMs ?? 'never'} ms after`,
    );
    check(
      `the cut-off client acquires again within ${RECOVERY_BOUND_MS} ms of heal ${i + 1}`,
      r.targetMs !== null && r.targetMs <= RECOVERY_BOUND_MS,
      `next acquisition ${r.targetMs ?? 'never'} ms after`,
    );
  }
  if ((fault === 'isolate leader' || fault === 'isolate member') && store.unavailableBound) {
    const { ms, why, afterServing } = store.unavailableBound;
    // The store's own time (an election), measured, not assumed.
    const electionMs = afterServing ? (run.servingAgainMs ?? undefined) : 0;
    check(
      `the lock has a holder again within ${ms} ms of a member's isolation (${why})`,
      electionMs !== undefined && report.longestWithoutHolderMs <= electionMs + ms,
      `longest without a holder ${Math.round(report.longestWithoutHolderMs)} ms` +
        (afterServing
          ? `; the others served again ${electionMs === undefined ? 'never' : `${Math.round(electionMs)} ms`} after an isolation`
          : ''),
    );
  }
  if (fault === 'slow clock') {
    const rate = run.clientClockRate;
    check(
      `the slow client's clock runs at most x${1 - (1 - SLOW_CLOCK_RATE) / 2}`,
      rate !== undefined && rate <= 1 - (1 - SLOW_CLOCK_RATE) / 2,
      `x${rate?.toFixed(4)} (asked x${SLOW_CLOCK_RATE})`,
    );
  }
  if (fault === 'store clock fast') {
    const asked = Number(report.meta.storeClockRate);
    const rate = run.storeClockRate;
    check(
      `the store's clock runs at least x${1 + (asked - 1) / 2}`,
      rate !== undefined && rate >= 1 + (asked - 1) / 2,
      `x${rate?.toFixed(4)} (asked x${asked})`,
    );
  }
  return checks;
}
