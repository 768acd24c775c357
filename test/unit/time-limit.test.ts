import { describe, expect, it } from '@jest/globals';
import { monotonicNow } from '../../lib/util/clock.js';
import { OVERDUE, TimeLimits, withinMs } from '../../lib/util/time-limit.js';

const never = (): Promise<never> => new Promise(() => undefined);

describe('withinMs', () => {
  it('passes on an answer in time, value or error', async () => {
    await expect(withinMs(Promise.resolve('answer'), 1_000)).resolves.toBe('answer');
    await expect(withinMs(Promise.reject(new Error('store error')), 1_000)).rejects.toThrow('store error');
  });

  it('rejects with OVERDUE once the time is up', async () => {
    await expect(withinMs(never(), 20)).rejects.toBe(OVERDUE);
    await expect(withinMs(never(), 20, { keepAlive: false })).rejects.toBe(OVERDUE);
  });

  it('gives up when the signal aborts, before the time is up', async () => {
    const controller = new AbortController();
    const limited = withinMs(never(), 60_000, { signal: controller.signal });
    controller.abort();
    await expect(limited).rejects.toBe(OVERDUE);
    const aborted = AbortSignal.abort();
    await expect(withinMs(never(), 60_000, { signal: aborted })).rejects.toBe(OVERDUE);
  });

  it('stops listening to the signal once the call settled', async () => {
    const controller = new AbortController();
    let listeners = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<typeof add>) => (listeners++, add(...args));
    signal.removeEventListener = (...args: Parameters<typeof remove>) => (listeners--, remove(...args));
    await withinMs(Promise.resolve(1), 60_000, { signal });
    await Promise.resolve();
    expect(listeners).toBe(0);
  });

  it('a call that fails after its time was up leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    let fail!: (error: Error) => void;
    const late = new Promise<never>((_, reject) => (fail = reject));
    await expect(withinMs(late, 10)).rejects.toBe(OVERDUE);
    fail(new Error('late failure'));
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  it('gives up a call whose bound has already passed within this event-loop turn, before a timer due now runs, unless it has settled', async () => {
    // The steps of close() share one bound: once the first is given up, the next must not wait for the timer.
    const limits = new TimeLimits(10);
    const passed = monotonicNow() - 1;
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    await expect(limits.within(never(), passed)).rejects.toBe(OVERDUE);
    expect(timerRan).toBe(false);
    await expect(limits.within(Promise.resolve('settled'), passed)).resolves.toBe('settled');
    await expect(limits.within(Promise.reject(new Error('failed')), passed)).rejects.toThrow('failed');
  });

  it('once told to stop keeping the process alive, its timer no longer does, and still gives up the calls it watches', async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const limits = new TimeLimits(0);
    const before = timeouts();
    const watched = limits.within(never(), monotonicNow() + 60);
    expect(timeouts()).toBe(before + 1);
    limits.stopKeepingAlive();
    expect(timeouts()).toBe(before);
    // The timer armed next (its next look) does not keep the process alive either.
    const sooner = limits.within(never(), monotonicNow() + 30);
    expect(timeouts()).toBe(before);
    // Both handlers attached at once: a timer that runs late gives both up in one run, and `watched` must
    // not sit rejected without a handler while the test waits for `sooner`.
    await Promise.all([expect(sooner).rejects.toBe(OVERDUE), expect(watched).rejects.toBe(OVERDUE)]);
  });
});
