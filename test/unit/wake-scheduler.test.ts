import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { WakeScheduler, type Wakeable } from '../../lib/engine/wake-scheduler.js';

describe('WakeScheduler (fake timers)', () => {
  let scheduler: WakeScheduler;
  let woken: string[];
  const target = (name: string): Wakeable => ({ wake: () => woken.push(name) });

  beforeEach(() => {
    jest.useFakeTimers();
    scheduler = new WakeScheduler();
    woken = [];
  });

  afterEach(() => {
    scheduler.close();
    jest.useRealTimers();
  });

  it("wakes a lease's lapse deadline on time when another lease's renewal, which may run up to its slack early, is due just after it", () => {
    const startedAt = performance.now();
    // A renewal due at 1005 that may run from 955 on, and a deadline (no slack) at 988: the lost signal must not wait for the renewal.
    scheduler.schedule(target('renewal'), startedAt + 1005, 50);
    scheduler.schedule(target('deadline'), startedAt + 988);
    jest.advanceTimersByTime(987);
    expect(woken).toEqual([]);
    jest.advanceTimersByTime(2);
    expect(woken).toContain('deadline');
  });

  it('still batches: a renewal whose window has opened runs with the wake-up that comes first', () => {
    const startedAt = performance.now();
    scheduler.schedule(target('first'), startedAt + 1000, 50);
    scheduler.schedule(target('second'), startedAt + 1030, 50);
    jest.advanceTimersByTime(1000);
    expect(woken).toEqual(['first', 'second']);
  });

  it('forgets a cancelled deadline', () => {
    const startedAt = performance.now();
    const deadline = target('deadline');
    scheduler.schedule(target('renewal'), startedAt + 1005, 50);
    scheduler.schedule(deadline, startedAt + 988);
    scheduler.cancel(deadline);
    jest.advanceTimersByTime(1005);
    expect(woken).toEqual(['renewal']);
  });
});
