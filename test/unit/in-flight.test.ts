import { describe, expect, it } from '@jest/globals';
import { InFlight } from '../../lib/engine/in-flight.js';

const isSettled = async (promise: Promise<void>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('InFlight: what closing waits for', () => {
  it('settles at once with nothing in flight', async () => {
    expect(await isSettled(new InFlight().settled())).toBe(true);
  });

  it('settles once every tracked promise has, fulfilled or rejected, for every caller waiting', async () => {
    const inFlight = new InFlight();
    let fulfil!: () => void;
    let reject!: (error: Error) => void;
    inFlight.track(new Promise<void>((resolve) => (fulfil = resolve)));
    inFlight.track(new Promise<void>((_, fail) => (reject = fail))).catch(() => undefined);
    const first = inFlight.settled();
    const second = inFlight.settled();
    fulfil();
    expect(await isSettled(first)).toBe(false);
    reject(new Error('store unreachable'));
    expect(await isSettled(first)).toBe(true);
    expect(await isSettled(second)).toBe(true);
  });

  it('returns the promise it tracks, unchanged', async () => {
    const command = Promise.resolve(42);
    expect(new InFlight().track(command)).toBe(command);
  });
});
