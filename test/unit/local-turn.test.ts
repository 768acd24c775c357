import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { FenceUpkeep } from '../../lib/backends/redis/fence-upkeep.js';
import { LocalTurn, TURN_MS } from '../../lib/backends/redis/local-turn.js';
import { validityAfterDrift } from '../../lib/backends/drift.js';

describe('LocalTurn: when a Redis lock may pass to the next claim of the process (fake timers)', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const newTurn = (firstSpare: number, lastFence: number, validForMs = 30_000) =>
    new LocalTurn(
      'owner-1',
      firstSpare,
      lastFence,
      performance.now() + validForMs,
      new FenceUpkeep(86_400_000, performance.now(), validForMs),
    );

  it('hands out the reserved fences in order, and none past the last', () => {
    const turn = newTurn(11, 13);
    expect([turn.nextHandOff(1000), turn.nextHandOff(1000), turn.nextHandOff(1000), turn.nextHandOff(1000)]).toEqual([
      11,
      12,
      13,
      undefined,
    ]);
  });

  it('has nothing to hand out when the acquisition reserved only its own fence', () => {
    expect(newTurn(8, 7).nextHandOff(1000)).toBeUndefined();
  });

  it(`ends ${TURN_MS} ms after it began, fences left or not`, () => {
    const turn = newTurn(1, 64);
    jest.advanceTimersByTime(TURN_MS - 1);
    expect(turn.nextHandOff(1000)).toBe(1);
    jest.advanceTimersByTime(1);
    expect(turn.nextHandOff(1000)).toBeUndefined();
  });

  it("does not hand over less than a third of the next claim's lease", () => {
    const turn = newTurn(1, 64, 1000);
    expect(turn.nextHandOff(3001)).toBeUndefined();
    expect(turn.nextHandOff(3000)).toBe(1);
  });

  it('does not hand over while a renewal is in flight (its TTL is not known yet)', async () => {
    const turn = newTurn(1, 64);
    let answer!: (extended: boolean) => void;
    const renewal = turn.renew(10_000, () => new Promise<boolean>((resolve) => (answer = resolve)));
    expect(turn.nextHandOff(1000)).toBeUndefined();
    answer(true);
    await expect(renewal).resolves.toBe(true);
    expect(turn.nextHandOff(1000)).toBe(1);
  });

  it("counts validity from the start of a successful renewal, with the renewal's lease", async () => {
    const turn = newTurn(1, 64, 60_000);
    const startedAt = performance.now();
    await turn.renew(2000, async () => true);
    // The renewed TTL, less the drift allowance (2 ms with no driftFactor).
    expect(turn.validUntil).toBe(startedAt + validityAfterDrift(2000, 0));
  });

  it("ends when a renewal finds the key no longer the turn's", async () => {
    const turn = newTurn(1, 64);
    await expect(turn.renew(10_000, async () => false)).resolves.toBe(false);
    expect(turn.nextHandOff(1)).toBeUndefined();
  });

  it('after a renewal with no answer, trusts no more than what that renewal may have set', async () => {
    const turn = newTurn(1, 64, 60_000);
    const startedAt = performance.now();
    await expect(turn.renew(900, async () => Promise.reject(new Error('connection lost')))).rejects.toThrow(
      'connection lost',
    );
    expect(turn.validUntil).toBe(startedAt + validityAfterDrift(900, 0));
    expect(turn.nextHandOff(3000)).toBeUndefined();
    expect(turn.nextHandOff(2690)).toBe(1);
  });
});
