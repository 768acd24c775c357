import { describe, expect, it } from '@jest/globals';
import { RECENT_HOLDS_PER_KEY, RecentHolds } from '../../lib/engine/recent-holds.js';

describe('RecentHolds', () => {
  it("estimates from the median of the key's last holds, less how long the current hold has lasted", () => {
    const holds = new RecentHolds();
    expect(holds.likelyFreeInMs('a')).toBeUndefined();
    for (const ms of [300, 20_000, 500]) holds.record('a', ms);
    expect(holds.likelyFreeInMs('a')).toBe(500);
    holds.record('a', 700);
    expect(holds.likelyFreeInMs('a')).toBe(600);
    expect(holds.likelyFreeInMs('a', 250)).toBe(350);
  });

  it('never says less than the current hold has already lasted: a hold past the typical one may run as long again', () => {
    const holds = new RecentHolds();
    for (const ms of [900, 1_000, 1_100]) holds.record('a', ms);
    expect(holds.likelyFreeInMs('a', 400)).toBe(600);
    expect(holds.likelyFreeInMs('a', 500)).toBe(500);
    expect(holds.likelyFreeInMs('a', 700)).toBe(700);
    expect(holds.likelyFreeInMs('a', 14_000)).toBe(14_000);
  });

  it('guesses nothing for a key this instance has not held recently, however long its current hold', () => {
    const holds = new RecentHolds();
    holds.record('b', 1_000);
    expect(holds.likelyFreeInMs('a', 14_000)).toBeUndefined();
  });

  it('keeps only the last holds of a key', () => {
    const holds = new RecentHolds();
    holds.record('a', 60_000);
    for (let i = 0; i < RECENT_HOLDS_PER_KEY; i++) holds.record('a', 100);
    expect(holds.likelyFreeInMs('a')).toBe(100);
  });

  it('stays within its bound of keys over many releases of fresh keys, keeping the latest', () => {
    const holds = new RecentHolds(100);
    for (let i = 0; i < 10_000; i++) {
      holds.record(`k${i}`, i);
      expect(holds.size).toBeLessThanOrEqual(100);
    }
    expect(holds.likelyFreeInMs('k9999')).toBe(9999);
    expect(holds.likelyFreeInMs('k0')).toBeUndefined();
  });

  it('remembers a bounded number of keys, dropping the one released least recently', () => {
    const holds = new RecentHolds(3);
    for (const key of ['a', 'b', 'c']) holds.record(key, 1_000);
    holds.record('a', 1_000);
    holds.record('d', 1_000);
    expect(holds.size).toBe(3);
    expect(holds.likelyFreeInMs('b')).toBeUndefined();
    expect(['a', 'c', 'd'].map((key) => holds.likelyFreeInMs(key))).toEqual([1_000, 1_000, 1_000]);
  });
});
