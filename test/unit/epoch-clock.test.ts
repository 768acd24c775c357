import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { epochMsAt, monotonicNow } from '../../lib/engine/clock.js';

describe('epochMsAt: wall-clock time of a monotonic reading', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('gives the wall-clock ms of the reading, never later than it, at most 1 ms early', () => {
    for (let i = 0; i < 1_000; i++) {
      const before = Date.now();
      const epoch = epochMsAt(monotonicNow());
      const after = Date.now();
      expect(epoch).toBeGreaterThanOrEqual(before - 1);
      expect(epoch).toBeLessThanOrEqual(after);
      expect(Number.isInteger(epoch)).toBe(true);
    }
  });

  it('follows a wall-clock step within a second of monotonic time', () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    const first = epochMsAt(monotonicNow());
    expect(first).toBe(1_700_000_000_000);
    jest.setSystemTime(1_800_000_000_000); // the wall clock steps; the monotonic clock does not
    jest.advanceTimersByTime(1_001);
    expect(epochMsAt(monotonicNow())).toBe(1_800_000_001_001);
  });
});
