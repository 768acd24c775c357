import { describe, expect, it, jest } from '@jest/globals';
import { ChannelWaiters, ReleaseWaiter } from '../../lib/backends/redis/channel-waiters.js';
import { STAND_BACK_MS_PER_PROCESS } from '../../lib/backends/redis/local-turn.js';
import { hasSettled } from '../support/settled.js';

// Pure unit tests of the in-process wake-up rules (the Redis side is in waiting.test.ts).
const never = new AbortController().signal;

function waiters(count: number) {
  const channel = new ChannelWaiters('c');
  const list = Array.from({ length: count }, () => new ReleaseWaiter());
  for (const waiter of list) channel.add(waiter);
  return { channel, list };
}

describe('ChannelWaiters', () => {
  it('after a turn, stands back until each other process that heard the release announced one of its own', async () => {
    // The clock stands still (the stand-back is 2 x STAND_BACK_MS_PER_PROCESS long): only the announcements end it here, however loaded the machine.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const { channel, list } = waiters(2);
      const sleep = list[0].sleep(60_000, never);
      channel.standBack(2);
      expect(channel.othersWaiting).toBe(2);
      expect(channel.yieldLeft()).toBeGreaterThan(0);
      // Its own announcement counts for nothing; each announcement still wakes the oldest sleeper (whose
      // try then sleeps out the stand-back), so none is missed.
      channel.heardRelease(false);
      expect(await hasSettled(sleep)).toBe(true);
      channel.heardRelease(true);
      expect(channel.yieldLeft()).toBeGreaterThan(0);
      // The second other process had its turn: this one stands back no more.
      channel.heardRelease(true);
      expect(channel.yieldLeft()).toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it(`stands back ${STAND_BACK_MS_PER_PROCESS} ms per other process at most, and not at all when nobody else heard the release`, () => {
    jest.useFakeTimers();
    try {
      const { channel } = waiters(1);
      channel.standBack(0);
      expect(channel.yieldLeft()).toBeUndefined();
      channel.standBack(3);
      jest.advanceTimersByTime(3 * STAND_BACK_MS_PER_PROCESS - 1);
      expect(channel.yieldLeft()).toBe(1);
      jest.advanceTimersByTime(1);
      expect(channel.yieldLeft()).toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('wakes only the oldest sleeping waiter per message', async () => {
    const { channel, list } = waiters(3);
    const sleeps = list.map((waiter) => waiter.sleep(60_000, never));
    channel.wakeOne();
    expect(await hasSettled(sleeps[0])).toBe(true);
    expect(await hasSettled(sleeps[1])).toBe(false);
    channel.wakeOne();
    expect(await hasSettled(sleeps[1])).toBe(true);
    expect(await hasSettled(sleeps[2])).toBe(false);
    channel.wakeAll();
    await Promise.all(sleeps);
  });

  it('gives two messages of one tick to two waiters', async () => {
    const { channel, list } = waiters(2);
    const sleeps = list.map((waiter) => waiter.sleep(60_000, never));
    channel.wakeOne();
    channel.wakeOne();
    expect(await hasSettled(sleeps[0])).toBe(true);
    expect(await hasSettled(sleeps[1])).toBe(true);
  });

  it('keeps a message that finds nobody asleep for the next sleeper, unless a try started since', () => {
    const { channel } = waiters(1);
    channel.wakeOne();
    expect(channel.takePending()).toBe(true);
    expect(channel.takePending()).toBe(false);
    channel.wakeOne();
    channel.noteTry(); // a try that starts after the message sees the release
    expect(channel.takePending()).toBe(false);
  });

  it('passes the wake-up of a waiter that leaves without trying to the next one', async () => {
    const { channel, list } = waiters(2);
    const [first, second] = list as [ReleaseWaiter, ReleaseWaiter];
    const sleeps = [first.sleep(60_000, never), second.sleep(60_000, never)];
    channel.wakeOne();
    await sleeps[0];
    channel.remove(first); // e.g. its caller aborted before it could try
    expect(await hasSettled(sleeps[1])).toBe(true);
  });

  it('does not pass on a wake-up that a try used', async () => {
    const { channel, list } = waiters(2);
    const [first, second] = list as [ReleaseWaiter, ReleaseWaiter];
    const sleeps = [first.sleep(60_000, never), second.sleep(60_000, never)];
    channel.wakeOne();
    await sleeps[0];
    first.noteTry();
    channel.remove(first); // it acquired the lock
    expect(await hasSettled(sleeps[1])).toBe(false);
    channel.wakeAll();
    await sleeps[1];
  });

  it('wakeNext wakes the first sleeper after a given waiter (or the oldest), and keeps nothing when nobody sleeps', async () => {
    const { channel, list } = waiters(3);
    const [first, second, third] = list as [ReleaseWaiter, ReleaseWaiter, ReleaseWaiter];
    const sleeps = [second.sleep(60_000, never), third.sleep(60_000, never)];
    channel.wakeNext(second); // a woken waiter passing its turn on goes forward only, never back to itself
    expect(await hasSettled(sleeps[0])).toBe(false);
    expect(await hasSettled(sleeps[1])).toBe(true);
    expect(second.noteTry()).toBe(false);
    expect(third.noteTry()).toBe(true); // the woken one sees its wake-up on its next try
    channel.wakeNext(); // first is awake: the oldest sleeper is second
    expect(await hasSettled(sleeps[0])).toBe(true);
    channel.wakeNext(third); // nobody after the last one
    channel.remove(first);
    expect(channel.takePending()).toBe(false);
  });

  it("puts a new claim behind queued ones only while the last seen holder's lease runs", () => {
    const channel = new ChannelWaiters('c');
    channel.noteHolderUntil(performance.now() + 5_000);
    expect(channel.queuedAheadTtl()).toBeUndefined(); // nobody queued
    channel.add(new ReleaseWaiter());
    expect(channel.queuedAheadTtl()).toBeGreaterThan(4_000);
    expect(channel.queuedAheadTtl()).toBeLessThanOrEqual(5_000);
    channel.noteHolderUntil(performance.now() - 1); // that lease is over: ask Redis
    expect(channel.queuedAheadTtl()).toBeUndefined();
    channel.noteHolderUntil(undefined); // no news keeps what is known
    expect(channel.queuedAheadTtl()).toBeUndefined();
  });

  it("ends a sleep on the caller's signal and after maxMs", async () => {
    const waiter = new ReleaseWaiter();
    const controller = new AbortController();
    const aborted = waiter.sleep(60_000, controller.signal);
    controller.abort();
    expect(await hasSettled(aborted)).toBe(true);
    await waiter.sleep(5, never);
    expect(waiter.isAsleep).toBe(false);
  });
});
