import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { FenceUpkeep } from '../../lib/backends/redis/fence-upkeep.js';

describe('FenceUpkeep: when a Redis renewal must keep the fence counter alive too (fake timers)', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('leaves the counter alone while it outlives the new lease by half the idle time, then asks for it', () => {
    // Acquired with a 30 s lease: the counter lives at least 30 s + 1 000 s.
    const upkeep = new FenceUpkeep(1_000_000, performance.now(), 30_000);
    expect(upkeep.due(30_000)).toBeUndefined();
    jest.advanceTimersByTime(499_000);
    expect(upkeep.due(30_000)).toBeUndefined();
    jest.advanceTimersByTime(2_000);
    expect(upkeep.due(30_000)).toBe(1_000_000);
    // A longer lease asks sooner.
    expect(new FenceUpkeep(1_000_000, performance.now(), 30_000).due(600_000)).toBe(1_000_000);
  });

  it('counts from a renewal that kept the counter, never backwards', () => {
    const upkeep = new FenceUpkeep(1_000, performance.now(), 300);
    jest.advanceTimersByTime(100);
    expect(upkeep.due(300)).toBeUndefined(); // 1 200 ms left >= 300 + 500
    jest.advanceTimersByTime(500);
    expect(upkeep.due(300)).toBe(1_000); // 700 ms left < 300 + 500
    upkeep.kept(performance.now(), 300);
    expect(upkeep.due(300)).toBeUndefined();
    upkeep.kept(performance.now() - 10_000, 300); // a late answer to an older renewal
    expect(upkeep.due(300)).toBeUndefined();
  });
});
