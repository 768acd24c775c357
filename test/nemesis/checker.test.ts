import { describe, expect, it } from '@jest/globals';
import { checkHistory, type HistoryEvent } from './checker.mjs';

/** A history from compact events: [process, type, f, time, extra?]. */
function history(...events: [HistoryEvent['process'], HistoryEvent['type'], string, number, Partial<HistoryEvent>?][]) {
  return {
    meta: { leaseMs: 1000 },
    events: events.map(([process, type, f, time, extra]) => ({ process, type, f, time, ...extra })),
  };
}
const kinds = (report: ReturnType<typeof checkHistory>) => report.violations.map((v) => v.kind);

describe('nemesis checker', () => {
  it('accepts a legal history: holders one after the other, rising fences, owners releasing', () => {
    const report = checkHistory(
      history(
        [0, 'invoke', 'acquire', 0],
        [1, 'invoke', 'acquire', 1],
        [0, 'ok', 'acquire', 2, { fence: 10 }],
        [0, 'invoke', 'write', 3, { resource: 'guarded', read: 0, fence: 10 }],
        [0, 'ok', 'write', 4, { resource: 'guarded', read: 0, prior: 0, priorFence: -1, fence: 10 }],
        [0, 'invoke', 'release', 5],
        [0, 'ok', 'release', 6],
        [1, 'ok', 'acquire', 7, { fence: 11 }],
        [1, 'invoke', 'release', 8],
        [1, 'ok', 'release', 9],
      ),
    );
    expect(report.violations).toEqual([]);
    expect({
      acquisitions: report.acquisitions,
      releases: report.releases,
      guardedAccepted: report.guardedAccepted,
    }).toEqual({ acquisitions: 2, releases: 2, guardedAccepted: 1 });
    expect(report.longestWithoutHolderMs).toBe(2);
  });

  it('counts the time without a holder up to the end of the run when the clients keep failing after the last hold', () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        [0, 'invoke', 'release', 10],
        [0, 'ok', 'release', 11],
        [1, 'invoke', 'acquire', 20],
        [1, 'fail', 'acquire', 2_020, { error: 'LockTimeoutError' }],
        [1, 'invoke', 'acquire', 2_021],
        [1, 'fail', 'acquire', 4_021, { error: 'LockTimeoutError' }],
        ['nemesis', 'event', 'heal', 4_100],
      ),
    );
    expect(report.acquisitions).toBe(1);
    expect(report.longestWithoutHolderMs).toBe(4_011);
  });

  it('finds two holders at once, and says how long they overlapped', () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        [1, 'ok', 'acquire', 10, { fence: 2 }],
        [0, 'invoke', 'release', 15],
        [1, 'invoke', 'release', 30],
      ),
    );
    expect(kinds(report)).toEqual(['overlap']);
    expect(report.longestOverlapMs).toBe(5);
  });

  it('ends a hold at its lost signal: the next holder after it is legal, and the margin is measured', () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        ['nemesis', 'event', 'partition', 1, { target: 0, mode: 'partitioned' }],
        [0, 'event', 'lost', 1000],
        [1, 'ok', 'acquire', 1012, { fence: 2 }],
        [0, 'invoke', 'release', 1500],
      ),
    );
    expect(report.violations).toEqual([]);
    expect(report.minLostMarginMs).toBe(12);
  });

  it("keeps apart a margin the holder's own release-on-loss may explain: its requests still reached the store (only replies lost)", () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        ['nemesis', 'event', 'partition', 1, { target: 0, mode: 'replies-dropped' }],
        [0, 'event', 'lost', 988, { lateMs: 0 }],
        [1, 'ok', 'acquire', 990, { fence: 2 }],
        ['nemesis', 'event', 'heal', 1500, { target: 0 }],
      ),
    );
    expect(report.violations).toEqual([]);
    expect({ min: report.minLostMarginMs, due: report.minDueLostMarginMs, freed: report.freedByHolderMargins }).toEqual(
      { min: null, due: null, freed: [2] },
    );
  });

  it("counts the margin of a holder cut off both ways, whose release cannot free the key: only the lease's expiry can", () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        ['nemesis', 'event', 'partition', 1, { target: 0, mode: 'partitioned' }],
        [0, 'event', 'lost', 988, { lateMs: 0 }],
        [1, 'ok', 'acquire', 990, { fence: 2 }],
        ['nemesis', 'event', 'heal', 1500, { target: 0 }],
      ),
    );
    expect({ min: report.minLostMarginMs, freed: report.freedByHolderMargins }).toEqual({ min: 2, freed: [] });
  });

  it("counts a late margin even when the holder's requests reached the store: a next holder before the signal is not explained by its release", () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        ['nemesis', 'event', 'partition', 1, { target: 0, mode: 'replies-dropped' }],
        [1, 'ok', 'acquire', 990, { fence: 2 }],
        [0, 'event', 'lost', 993, { lateMs: 1 }],
      ),
    );
    expect(kinds(report)).toEqual(['overlap']);
    expect({ min: report.minLostMarginMs, freed: report.freedByHolderMargins }).toEqual({ min: -3, freed: [] });
  });

  it("ends a lost hold at its lease's local deadline when the signal's timer ran late: no overlap if the deadline came first, an overlap if it did not", () => {
    const late = (lateMs: number) =>
      checkHistory(
        history(
          [0, 'ok', 'acquire', 0, { fence: 1 }],
          ['nemesis', 'event', 'partition', 1, { target: 0, mode: 'iptables' }],
          [1, 'ok', 'acquire', 1000, { fence: 2 }],
          [0, 'event', 'lost', 1006, { lateMs }],
        ),
      );
    // The deadline 15.7 ms before the next holder, the signal 6 ms after it (a loaded event loop): reported in the margins, not as two holders.
    const loaded = late(21.7);
    expect({ kinds: kinds(loaded), min: loaded.minLostMarginMs, due: loaded.minDueLostMarginMs }).toEqual({
      kinds: [],
      min: -6,
      due: 15.7,
    });
    // The deadline itself after the next holder's acquisition: two holders at once.
    const overlapping = late(2);
    expect({ kinds: kinds(overlapping), overlapMs: overlapping.longestOverlapMs }).toEqual({
      kinds: ['overlap'],
      overlapMs: 4,
    });
  });

  it("measures the due margin from the lease's local deadline: a timer the event loop ran late does not count against the library", () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        [0, 'event', 'lost', 995, { lateMs: 7 }],
        [1, 'ok', 'acquire', 1000, { fence: 2 }],
        ['nemesis', 'event', 'partition', 1, { target: 0, mode: 'iptables' }],
      ),
    );
    expect({ min: report.minLostMarginMs, due: report.minDueLostMarginMs, late: report.longestLostLateMs }).toEqual({
      min: 5,
      due: 12,
      late: 7,
    });
  });

  it('counts a lost signal that fires after the next holder got the lock as an overlap (negative margin)', () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        [1, 'ok', 'acquire', 1000, { fence: 2 }],
        [0, 'event', 'lost', 1003],
      ),
    );
    expect(kinds(report)).toEqual(['overlap']);
    expect(report.minLostMarginMs).toBe(-3);
  });

  it('ends a paused holder at its pause when the pause outlasted its lease less the drift allowance (988 ms of a 1,000 ms lease) and its lost signal fires at the resume', () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        ['nemesis', 'event', 'pause', 5, { target: 0 }],
        [1, 'ok', 'acquire', 1100, { fence: 2 }],
        ['nemesis', 'event', 'resume', 993, { target: 0 }],
        [0, 'event', 'lost', 1200],
      ),
    );
    expect(report.violations).toEqual([]);
  });

  it('finds the overlap of a holder paused for a few ms: a pause shorter than its lease less the drift allowance excuses nothing', () => {
    for (const pauseMs of [1, 5, 987]) {
      const report = checkHistory(
        history(
          [0, 'ok', 'acquire', 0, { fence: 1 }],
          ['nemesis', 'event', 'pause', 3, { target: 0 }],
          ['nemesis', 'event', 'resume', 3 + pauseMs, { target: 0 }],
          [1, 'ok', 'acquire', 1_000, { fence: 2 }],
          [0, 'event', 'lost', 1_003],
        ),
      );
      expect({ pauseMs, kinds: kinds(report), overlapMs: report.longestOverlapMs }).toEqual({
        pauseMs,
        kinds: ['overlap'],
        overlapMs: 3,
      });
    }
    // The same history without the pause: the same overlap.
    const unpaused = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        [1, 'ok', 'acquire', 500, { fence: 2 }],
        [0, 'event', 'lost', 1_003],
      ),
    );
    expect(kinds(unpaused)).toEqual(['overlap']);
  });

  it("finds the overlap of a 2 ms pause followed by another client's acquire at 500 ms while the lost signal fires at 1,003 ms", () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        ['nemesis', 'event', 'pause', 10, { target: 0 }],
        ['nemesis', 'event', 'resume', 12, { target: 0 }],
        [1, 'ok', 'acquire', 500, { fence: 2 }],
        [0, 'event', 'lost', 1_003],
      ),
    );
    expect(kinds(report)).toEqual(['overlap']);
    expect(report.longestOverlapMs).toBe(503);
  });

  it('finds a fence that does not exceed an earlier one', () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 5 }],
        [0, 'invoke', 'release', 1],
        [1, 'ok', 'acquire', 2, { fence: 5 }],
        [1, 'invoke', 'release', 3],
        [2, 'ok', 'acquire', 4, { fence: 4 }],
      ),
    );
    expect(kinds(report)).toEqual(['fence-regression', 'fence-regression']);
  });

  it('lets re-entry keep its fence, and flags one that changes it', () => {
    const same = checkHistory(history([0, 'ok', 'acquire', 0, { fence: 5 }], [0, 'ok', 'acquire', 1, { fence: 5 }]));
    expect(same.violations).toEqual([]);
    const changed = checkHistory(history([0, 'ok', 'acquire', 0, { fence: 5 }], [0, 'ok', 'acquire', 1, { fence: 6 }]));
    expect(kinds(changed)).toEqual(['reentry-fence-changed']);
  });

  it('flags a release that succeeds for a process that does not hold the lock', () => {
    const report = checkHistory(history([0, 'invoke', 'release', 0], [0, 'ok', 'release', 1]));
    expect(kinds(report)).toEqual(['release-by-non-holder']);
  });

  it('treats indeterminate acquisitions as Jepsen does: neither a holder nor a violation, and their fences unknown', () => {
    const report = checkHistory(
      history(
        [0, 'invoke', 'acquire', 0],
        [0, 'info', 'acquire', 100, { error: 'timed out' }],
        [1, 'ok', 'acquire', 50, { fence: 3 }],
        [1, 'invoke', 'release', 60],
        [2, 'ok', 'acquire', 70, { fence: 4 }],
      ),
    );
    expect(report.violations).toEqual([]);
    expect(report.acquireIndeterminate).toBe(1);
  });

  it('finds lost updates and stale writes the fence guard accepted', () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'write', 0, { resource: 'guarded', read: 3, prior: 4, priorFence: 2, fence: 2 }],
        [1, 'ok', 'write', 1, { resource: 'guarded', read: 5, prior: 5, priorFence: 9, fence: 8 }],
      ),
    );
    expect(kinds(report)).toEqual(['guarded-lost-update', 'guarded-stale-write']);
  });

  it("counts the canary's lost updates and its writes after a lost lock as anomalies, not violations", () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        [0, 'event', 'lost', 1000],
        [1, 'ok', 'acquire', 1010, { fence: 2 }],
        [1, 'ok', 'write', 1020, { resource: 'canary', read: 7, prior: 7 }],
        [0, 'ok', 'write', 1500, { resource: 'canary', read: 7, prior: 8 }],
      ),
    );
    expect(report.violations).toEqual([]);
    expect(report.canary).toEqual({ lostUpdates: 1, writesAfterLoss: 1 });
    expect(report.canaryAnomalies).toBe(2);
  });

  it('measures recovery after a heal: the next acquisition by anyone and by the client that was cut off', () => {
    const report = checkHistory(
      history(
        ['nemesis', 'event', 'heal', 100, { target: 0 }],
        [1, 'ok', 'acquire', 150, { fence: 1 }],
        [1, 'invoke', 'release', 160],
        [0, 'ok', 'acquire', 400, { fence: 2 }],
      ),
    );
    expect(report.recoveries).toEqual([{ f: 'heal', time: 100, target: 0, anyMs: 50, targetMs: 300, answerMs: 300 }]);
  });

  it('measures the cut-off client\'s first answer from the store after the heal: the first it heard (even "busy", inside a wait), not an answer before the heal', () => {
    const report = checkHistory(
      history(
        [0, 'invoke', 'acquire', 50],
        [0, 'event', 'heard', 60],
        ['nemesis', 'event', 'heal', 100, { target: 0 }],
        [1, 'ok', 'acquire', 110, { fence: 1 }],
        [0, 'event', 'heard', 130, { silentMs: 70 }],
        [1, 'invoke', 'release', 240],
        [0, 'ok', 'acquire', 400, { fence: 2 }],
      ),
    );
    expect(report.recoveries).toEqual([{ f: 'heal', time: 100, target: 0, anyMs: 10, targetMs: 300, answerMs: 30 }]);
  });

  it('reports a cut-off client that never hears from the store or acquires again after the heal as null, not as a slow one', () => {
    const report = checkHistory(
      history(
        [0, 'ok', 'acquire', 0, { fence: 1 }],
        [0, 'invoke', 'release', 10],
        ['nemesis', 'event', 'heal', 100, { target: 0 }],
        [0, 'invoke', 'acquire', 110],
        [0, 'info', 'acquire', 2_110, { error: 'LockBackendError: unreachable' }],
        [1, 'ok', 'acquire', 2_200, { fence: 2 }],
      ),
    );
    expect(report.recoveries).toEqual([
      { f: 'heal', time: 100, target: 0, anyMs: 2_100, targetMs: null, answerMs: null },
    ]);
  });

  it("measures the longest acquire that failed or was indeterminate, and counts those answered after their wait bound's timer ran, not counting those the run's end aborted", () => {
    const report = checkHistory(
      history(
        [0, 'invoke', 'acquire', 0],
        [0, 'fail', 'acquire', 2600, { error: 'LockTimeoutError: timed out', pastBound: false }],
        [1, 'invoke', 'acquire', 100],
        [1, 'info', 'acquire', 5200, { error: 'LockBackendError: [redis] Command timed out', pastBound: true }],
        [2, 'invoke', 'acquire', 0],
        [2, 'fail', 'acquire', 9000, { error: 'AbortError: This operation was aborted', pastBound: true }],
      ),
    );
    expect({ longest: report.longestFailedAcquireMs, pastBound: report.acquiresPastWaitBound }).toEqual({
      longest: 5100,
      pastBound: 1,
    });
  });
});
