import { DEFAULT_DRIFT_FACTOR, driftMs } from '../../lib/backends/drift.js';
import type { NemesisRun } from './nemesis-runner.js';

/** NEMESIS_PENDING=1 also asserts the checks held back, which not every run passes (see docs/faults.md, Checks held back). */
export const PENDING = process.env.NEMESIS_PENDING === '1';

/** The clock-drift allowance a holder's local lease must end by before the store's, at the stores' default driftFactor. */
export const driftAllowanceMs = (leaseMs: number) => driftMs(leaseMs, DEFAULT_DRIFT_FACTOR);
/** A client cut off from its store acquires again within this long of the heal. */
export const RECOVERY_BOUND_MS = 5_000;
/** How much longer than its waitMs an acquire that fails may take to answer. */
export const WAIT_MARGIN_MS = 250;

export interface FurtherCheck {
  readonly name: string;
  readonly passed: boolean;
  readonly detail: string;
  /** Asserted only with NEMESIS_PENDING=1: a run on a loaded machine, or of some stores, may fail it. */
  readonly heldBack: boolean;
}

/** Checks of a run's timing beyond the checker's safety verdict: bounds on waits, recovery, margins and gaps. */
export function furtherChecks(run: NemesisRun, { ridesThrough = false }: { ridesThrough?: boolean } = {}): FurtherCheck[] {
  const { report } = run;
  const leaseMs = Number(report.meta.leaseMs);
  const checks: FurtherCheck[] = [];
  // Under a slow clock the allowance is what absorbs the drift: there the check is "no overlap" (below).
  if (report.minLostMarginMs !== null && run.fault !== 'slow clock' && run.fault !== 'store clock fast') {
    const allowance = driftAllowanceMs(leaseMs);
    // The default run checks the margin from the lease's deadline; this one also counts how late the timer fired.
    // A timer a loaded event loop runs late is the machine's doing: held back (the suite asserts the margin from the deadline).
    checks.push({ name: 'lost signal fires >= drift allowance before the next holder, timer lateness included', passed: report.minLostMarginMs >= allowance, detail: `min margin ${report.minLostMarginMs} ms (timer up to ${report.longestLostLateMs} ms late), allowance ${allowance} ms`, heldBack: true });
  }
  const overlaps = report.violations.filter((v) => v.kind === 'overlap').length;
  if (run.fault === 'slow clock') {
    checks.push({ name: 'a client clock 0.5 % slow: no overlap', passed: overlaps === 0, detail: `${overlaps} overlap(s), longest ${report.longestOverlapMs} ms`, heldBack: false });
  } else if (overlaps > 0) {
    // Asserted by the suite unless the row expects violations (Redis Sentinel without replicas).
    checks.push({ name: 'no overlap (a lost signal fired after the next holder got the lock)', passed: false, detail: `${overlaps} overlap(s), longest ${report.longestOverlapMs} ms`, heldBack: true });
  }
  const waitMs = Number(report.meta.waitMs);
  if (Number.isFinite(waitMs) && report.longestFailedAcquireMs !== null) {
    const bound = waitMs + WAIT_MARGIN_MS;
    checks.push({ name: `waitMs bounds the wait (an acquire that fails answers within waitMs + ${WAIT_MARGIN_MS} ms)`, passed: report.longestFailedAcquireMs <= bound, detail: `longest failed acquire ${report.longestFailedAcquireMs} ms, waitMs ${waitMs}`, heldBack: false });
  }
  if (run.fault.startsWith('partition') || run.fault === 'slow clock' || run.fault === 'store clock fast') {
    const worst = Math.max(...report.recoveries.map((r) => r.targetMs ?? Infinity));
    // Held back: the cut-off client competes with two others for the lock, and MySQL's waiters poll: in 5 rounds it lost turns for up to 7.6 s.
    checks.push({ name: `the cut-off client acquires within ${RECOVERY_BOUND_MS} ms of the heal`, passed: worst <= RECOVERY_BOUND_MS, detail: `slowest ${worst} ms`, heldBack: true });
  }
  if (isIsolation(run.fault)) {
    const bound = rideThroughBoundMs(report);
    checks.push({ name: 'the clients ride through a member\'s isolation', passed: report.longestWithoutHolderMs <= bound, detail: `longest without a holder ${Math.round(report.longestWithoutHolderMs)} ms, bound ${bound} ms (the loss time + 1 s + the store's failover time)`, heldBack: !ridesThrough });
  }
  return checks;
}

function isIsolation(fault: string): boolean {
  return fault === 'isolate member' || fault === 'isolate leader';
}

/** The longest a member's isolation may leave the lock without a holder: the loss time + 1 s + the store's failover time. */
function rideThroughBoundMs(report: NemesisRun['report']): number {
  return Number(report.meta.lossMs) + 1_000 + Number(report.meta.failoverMs ?? 0);
}
