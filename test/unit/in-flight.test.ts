import { describe, expect, it } from '@jest/globals';
import { InFlight } from '../../lib/util/in-flight.js';
import { hasSettled } from '../support/settled.js';

describe('InFlight: what closing waits for', () => {
  it('settles at once with nothing in flight', async () => {
    expect(await hasSettled(new InFlight().settled())).toBe(true);
  });

  it('settles once every tracked promise has, fulfilled or rejected, for every caller waiting', async () => {
    const inFlight = new InFlight();
    let fulfil!: () => void;
    let reject!: (error: Error) => void;
    void inFlight.track(new Promise<void>((resolve) => (fulfil = resolve)));
    inFlight.track(new Promise<void>((_, fail) => (reject = fail))).catch(() => undefined);
    const first = inFlight.settled();
    const second = inFlight.settled();
    fulfil();
    expect(await hasSettled(first)).toBe(false);
    reject(new Error('store unreachable'));
    expect(await hasSettled(first)).toBe(true);
    expect(await hasSettled(second)).toBe(true);
  });

  it('returns the promise it tracks, unchanged', async () => {
    const command = Promise.resolve(42);
    expect(new InFlight().track(command)).toBe(command);
  });
});
