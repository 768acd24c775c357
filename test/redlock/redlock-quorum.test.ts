import { describe, expect, it } from '@jest/globals';
import { acquireVerdict, holdVerdict, type Tally } from '../../lib/backends/redlock/quorum-round.js';
import { driftMs, timeUntilQuorumFree, validityFromRoundStart } from '../../lib/backends/redlock/validity.js';

const t = (yes: number, no: number, pending: number, unanswered: number): Tally => ({ yes, no, pending, unanswered });

/** The pure rules of a round over 5 masters with a quorum of 3. */
describe('redlock quorum rules', () => {
  describe('acquireVerdict', () => {
    it.each([
      ['3 took it, 2 still pending', t(3, 0, 2, 0), 'quorum'],
      ['5 took it', t(5, 0, 0, 0), 'quorum'],
      ['2 took it, 2 pending: could still win', t(2, 1, 2, 0), undefined],
      ['all 5 busy', t(0, 5, 0, 0), 'busy'],
      ['3 busy, 2 pending: cannot win, enough answered', t(0, 3, 2, 0), 'busy'],
      ['split vote 2 / 2, 1 down', t(2, 2, 0, 1), 'busy'],
      ['2 answered, 3 down', t(2, 0, 0, 3), 'unreachable'],
      ['0 answered yet, 3 down: decided at once', t(0, 0, 2, 3), 'unreachable'],
      ['1 busy, 1 took it, 1 pending, 2 down: wait for the last one', t(1, 1, 1, 2), undefined],
    ])('%s', (_name, tally, verdict) => {
      expect(acquireVerdict(tally, 3)).toBe(verdict);
    });
  });

  describe('holdVerdict (renewal and final release over the masters that may hold the key)', () => {
    it.each([
      ['3 still had it', t(3, 0, 1, 1), 'held'],
      ['2 had it, 3 answered it is gone', t(2, 3, 0, 0), 'lost'],
      ['2 had it, 1 said gone, 1 silent', t(2, 1, 0, 1), 'unknown'],
      ['2 had it, 1 pending', t(2, 0, 1, 0), undefined],
      ['nobody had it', t(0, 5, 0, 0), 'lost'],
      ['2 had it, 3 silent', t(2, 0, 0, 3), 'unknown'],
    ])('%s', (_name, tally, verdict) => {
      expect(holdVerdict(tally, 3)).toBe(verdict);
    });
  });

  it('drift is lease x driftFactor + 2 ms, and validity from the round start is lease - drift', () => {
    expect(driftMs(10_000, 0.01)).toBe(102);
    expect(validityFromRoundStart(10_000, 0.01)).toBe(9_898);
    expect(validityFromRoundStart(1, 0)).toBe(-1);
  });

  it('time until a quorum is free: the k-th smallest holder TTL, k = quorum - masters already free', () => {
    expect(timeUntilQuorumFree(3, 0, [500, 100, 300, 200, 400])).toBe(300);
    expect(timeUntilQuorumFree(3, 2, [500, undefined, 300])).toBe(300);
    expect(timeUntilQuorumFree(3, 3, [])).toBe(0);
    expect(timeUntilQuorumFree(3, 0, [100, undefined, undefined])).toBeUndefined();
  });
});
