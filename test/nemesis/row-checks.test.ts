import { describe, expect, it } from '@jest/globals';
import { checkHistory, type HistoryEvent } from './checker.mjs';
import type { NemesisFault, NemesisRun } from './nemesis-runner.js';
import { rowChecks } from './row-checks.js';

type Event = [HistoryEvent['process'], HistoryEvent['type'], string, number, Partial<HistoryEvent>?];

/** A run of `fault` whose history is `events` (lease 1,000 ms, waitMs 2,600 ms). */
function run(fault: NemesisFault, events: Event[], extra: Partial<NemesisRun> = {}, latencyMs = 0): NemesisRun {
  const history = {
    meta: { leaseMs: 1_000, waitMs: 2_600, storeClockRate: 1, latencyMs },
    events: events.map(([process, type, f, time, more]) => ({ process, type, f, time, ...more })),
  };
  return { store: 'test', fault, seed: 1, file: '', report: checkHistory(history), seconds: 1, ...extra };
}
const failed = (r: NemesisRun, options: Parameters<typeof rowChecks>[1] = {}, overlapsExpected?: string) =>
  rowChecks(r, options, overlapsExpected)
    .filter((c) => !c.passed)
    .map((c) => c.name);

/** Client 0 takes the lock and is cut off; client 1 takes it `marginMs` after 0's lost signal (`lateMs` after its deadline); the heal; 0's stale writes; then `after`. */
function partitioned(marginMs: number, after: Event[], lateMs = 0): Event[] {
  return [
    [0, 'invoke', 'acquire', 0],
    [0, 'ok', 'acquire', 1, { fence: 1 }],
    ['nemesis', 'event', 'partition', 2, { target: 0, mode: 'partitioned' }],
    [1, 'invoke', 'acquire', 500],
    [0, 'event', 'lost', 988, { lateMs }],
    [1, 'ok', 'acquire', 988 + marginMs, { fence: 2 }],
    [1, 'ok', 'write', 1_014, { resource: 'guarded', read: 0, prior: 0, priorFence: -1, fence: 2 }],
    [1, 'ok', 'write', 1_015, { resource: 'canary', read: 0, prior: 0 }],
    [1, 'invoke', 'release', 1_020],
    [1, 'ok', 'release', 1_021],
    ['nemesis', 'event', 'heal', 1_500, { target: 0 }],
    [0, 'fail', 'write', 1_510, { resource: 'guarded', read: 0, fence: 1, error: 'StaleFenceError' }],
    [0, 'ok', 'write', 1_511, { resource: 'canary', read: 0, prior: 1 }],
    [0, 'invoke', 'release', 1_512],
    [0, 'fail', 'release', 1_513, { error: 'LockLostError' }],
    ...after,
  ];
}
const recovers: Event[] = [
  [0, 'invoke', 'acquire', 1_514],
  [0, 'ok', 'acquire', 1_520, { fence: 3 }],
  [0, 'invoke', 'release', 1_530],
  [0, 'ok', 'release', 1_531],
];

describe('the checks of a nemesis row', () => {
  it('pass a partition the library rode through: no overlap, the fault bit, margin >= 12 ms, the cut-off client back', () => {
    expect(failed(run('partition', partitioned(22, recovers)))).toEqual([]);
  });

  it('fail a row whose cut-off client never hears from the store again, or never acquires again, after the heal', () => {
    const never: Event[] = [
      [0, 'invoke', 'acquire', 1_514],
      [0, 'info', 'acquire', 4_214, { error: 'LockBackendError: unreachable' }],
      [1, 'invoke', 'acquire', 4_300],
      [1, 'ok', 'acquire', 4_301, { fence: 3 }],
    ];
    expect(failed(run('partition', partitioned(22, never)))).toEqual([
      'the cut-off client hears from the store within 5000 ms of heal 1',
      'the cut-off client acquires again within 5000 ms of heal 1',
    ]);
  });

  it('fail a row whose cut-off client acquires again only 5.5 s after the heal (starved by the others)', () => {
    const late: Event[] = [
      [0, 'invoke', 'acquire', 1_514],
      [0, 'event', 'heard', 1_530],
      [0, 'fail', 'acquire', 4_114, { error: 'LockTimeoutError: busy' }],
      [0, 'invoke', 'acquire', 4_150],
      [0, 'ok', 'acquire', 6_550, { fence: 3 }],
    ];
    expect(failed(run('partition', partitioned(22, late)))).toEqual([
      'the cut-off client acquires again within 5000 ms of heal 1',
    ]);
  });

  it('fail a lost signal 3 ms before the next holder with a 1,000 ms lease (a drift factor of 0 gives 2 ms + a round trip): the allowance is 12 ms', () => {
    expect(failed(run('partition', partitioned(3, recovers)))).toEqual([
      "the lease's local deadline is >= lease x 0.01 + 2 ms (12 ms) before the next holder",
    ]);
    expect(failed(run('partition', partitioned(12, recovers)))).toEqual([]);
  });

  it('hold a row 20 ms away to the lost signal itself: a timer run 9 ms late that leaves 5 ms fails there, not on loopback, where the deadline (14 ms) is checked', () => {
    const late = partitioned(5, recovers, 9);
    expect(failed(run('partition', late))).toEqual([]);
    expect(failed(run('partition', late, {}, 20))).toEqual([
      'the lost signal fires >= lease x 0.01 + 2 ms (12 ms) before the next holder, 20 ms away',
    ]);
  });

  it('fail a row whose fault did not bite: no canary anomaly, no refused stale write', () => {
    const quiet = partitioned(22, recovers).filter(
      ([process, , f, time]) => !(process === 0 && f === 'write' && time > 1_500),
    );
    expect(failed(run('partition', quiet))).toEqual([
      'the fault bit: the canary shows anomalies',
      "the fence guard refused the stale holder's write",
    ]);
  });

  it('fail an acquire answered after a timer due at waitMs + 100 ms had run in its client', () => {
    const waited: Event[] = [
      ...recovers,
      [2, 'invoke', 'acquire', 1_600],
      [2, 'info', 'acquire', 4_320, { error: 'LockBackendError: unreachable', pastBound: true }],
    ];
    expect(failed(run('partition', partitioned(22, waited)))).toEqual([
      'an acquire that fails answers within waitMs + 100 ms',
    ]);
  });

  it('report, not fail, the overlaps and margins of a row that expects them, and still fail its other checks', () => {
    const overlapping = partitioned(-5, recovers);
    expect(failed(run('isolate leader from peers', overlapping))).toEqual([
      'no overlap',
      "the lease's local deadline is >= lease x 0.01 + 2 ms (12 ms) before the next holder",
    ]);
    expect(failed(run('isolate leader from peers', overlapping), {}, 'documented')).toEqual([]);
    const stale = [
      ...overlapping,
      [2, 'ok', 'write', 1_600, { resource: 'guarded', read: 3, prior: 4, priorFence: 1, fence: 1 }] as Event,
    ];
    expect(failed(run('isolate leader from peers', stale), {}, 'documented')).toEqual([
      'no lost update or stale write accepted by the fence guard',
    ]);
  });

  it("fail an isolation that left the lock without a holder longer than the store's bound", () => {
    const gap: Event[] = [
      [0, 'ok', 'acquire', 0, { fence: 1 }],
      [0, 'invoke', 'release', 10],
      ['nemesis', 'event', 'partition', 20, { member: 'm1' }],
      [1, 'ok', 'acquire', 4_500, { fence: 2 }],
      ['nemesis', 'event', 'heal', 8_020, { member: 'm1' }],
      [1, 'invoke', 'release', 8_030],
      [2, 'ok', 'acquire', 8_040, { fence: 3 }],
    ];
    expect(failed(run('isolate leader', gap), { unavailableBound: { ms: 4_000, why: 'test' } })).toEqual([
      "the lock has a holder again within 4000 ms of a member's isolation (test)",
    ]);
    expect(failed(run('isolate leader', gap), { unavailableBound: { ms: 4_500, why: 'test' } })).toEqual([]);
    // Counted from when the members left served again (an election the store took), as measured in the run.
    const afterServing = { unavailableBound: { ms: 4_000, why: 'test', afterServing: true } };
    expect(failed(run('isolate leader', gap, { servingAgainMs: 600 }), afterServing)).toEqual([]);
    expect(failed(run('isolate leader', gap, { servingAgainMs: 400 }), afterServing)).toEqual([
      "the lock has a holder again within 4000 ms of a member's isolation (test)",
    ]);
    expect(failed(run('isolate leader', gap, { servingAgainMs: null }), afterServing)).toEqual([
      "the lock has a holder again within 4000 ms of a member's isolation (test)",
    ]);
  });

  it("fail a slow-clock row whose client's clock was not measured slow, and a fast-store-clock row whose store's was not measured fast", () => {
    const slow = partitioned(22, recovers);
    expect(failed(run('slow clock', slow, { clientClockRate: 0.995 }))).toEqual([]);
    expect(failed(run('slow clock', slow, { clientClockRate: 1 }))).toEqual([
      "the slow client's clock runs at most x0.9975",
    ]);
    expect(failed(run('slow clock', slow))).toEqual(["the slow client's clock runs at most x0.9975"]);
    const fast = (rate: number | undefined) =>
      run('store clock fast', slow, {
        storeClockRate: rate,
        report: {
          ...run('store clock fast', slow).report,
          meta: { leaseMs: 1_000, waitMs: 2_600, storeClockRate: 1.01 },
        },
      });
    expect(failed(fast(1.0098))).toEqual([]);
    expect(failed(fast(1.001))).toEqual(["the store's clock runs at least x1.005"]);
  });
});
