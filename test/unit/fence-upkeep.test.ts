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

  describe('outlivesRelease: whether an exclusive release may leave the counter TTL as it is', () => {
    const IDLE = 86_400_000;

    it('within the lease the counter was kept for, counted on a Redis clock 1 % faster, and not past it', () => {
      const upkeep = new FenceUpkeep(IDLE, performance.now(), 30_000, 0);
      expect(upkeep.outlivesRelease(0.01)).toBe(true);
      jest.advanceTimersByTime(29_700); // 29 997 ms on a clock 1 % faster
      expect(upkeep.outlivesRelease(0.01)).toBe(true);
      jest.advanceTimersByTime(10);
      expect(upkeep.outlivesRelease(0.01)).toBe(false);
      expect(upkeep.outlivesRelease(0)).toBe(true);
    });

    it('counts from the renewal that last kept the counter', () => {
      const upkeep = new FenceUpkeep(IDLE, performance.now(), 30_000, 0);
      jest.advanceTimersByTime(40_000);
      expect(upkeep.outlivesRelease(0.01)).toBe(false);
      upkeep.kept(performance.now(), 30_000);
      expect(upkeep.outlivesRelease(0.01)).toBe(true);
    });

    it('takes how far the fences run ahead of the clock out of the unspent lease', () => {
      const upkeep = new FenceUpkeep(IDLE, performance.now(), 30_000, 20_000);
      jest.advanceTimersByTime(9_000);
      expect(upkeep.outlivesRelease(0.01)).toBe(true);
      jest.advanceTimersByTime(1_000);
      expect(upkeep.outlivesRelease(0.01)).toBe(false);
    });

    it('never when how far the fences run ahead is unknown, or when the lease is more than a hundredth of the idle time', () => {
      expect(new FenceUpkeep(IDLE, performance.now(), 30_000).outlivesRelease(0.01)).toBe(false);
      expect(new FenceUpkeep(1_500, performance.now(), 30_000, 0).outlivesRelease(0.01)).toBe(false);
      expect(new FenceUpkeep(3_000_000, performance.now(), 30_000, 0).outlivesRelease(0.01)).toBe(true);
      expect(new FenceUpkeep(2_999_999, performance.now(), 30_000, 0).outlivesRelease(0.01)).toBe(false);
    });
  });
});
