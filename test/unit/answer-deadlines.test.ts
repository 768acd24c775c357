import { describe, expect, it } from '@jest/globals';
import { AnswerDeadlines } from '../../lib/engine/answer-deadlines.js';
import { OVERDUE } from '../../lib/util/time-limit.js';
import { monotonicNow } from '../../lib/util/clock.js';

/** Whether `answer` settled before a timer due `ms` from now ran: load-independent, the deadlines run on the same event loop. */
async function settlesWithin(answer: Promise<unknown>, ms: number): Promise<{ inTime: boolean; outcome: unknown }> {
  let ran = false;
  const timer = setTimeout(() => (ran = true), ms);
  const outcome = await answer.catch((error: unknown) => error);
  clearTimeout(timer);
  return { inTime: !ran, outcome };
}

describe('AnswerDeadlines', () => {
  it.each([7, 40, 65])(
    'gives up a call that never answers before its bound, %i ms away, not a tick after it',
    async (ms) => {
      const deadlines = new AnswerDeadlines();
      const bound = monotonicNow() + ms;
      const result = await settlesWithin(deadlines.within(new Promise(() => undefined), bound), ms);
      expect(result).toEqual({ inTime: true, outcome: OVERDUE });
      deadlines.stopIfIdle();
    },
  );

  it('a call due sooner than the one already watched is given up by its own bound', async () => {
    const deadlines = new AnswerDeadlines();
    let answerLate!: (value: string) => void;
    const late = deadlines.within(new Promise<string>((resolve) => (answerLate = resolve)), monotonicNow() + 2_000);
    const result = await settlesWithin(deadlines.within(new Promise(() => undefined), monotonicNow() + 30), 30);
    expect(result).toEqual({ inTime: true, outcome: OVERDUE });
    answerLate('answered');
    await expect(late).resolves.toBe('answered');
    deadlines.stopIfIdle();
  });

  it('an answer in time is passed on as it is', async () => {
    const deadlines = new AnswerDeadlines();
    await expect(deadlines.within(Promise.resolve('answer'), monotonicNow() + 1_000)).resolves.toBe('answer');
    await expect(deadlines.within(Promise.reject(new Error('store error')), monotonicNow() + 1_000)).rejects.toThrow(
      'store error',
    );
    deadlines.stopIfIdle();
  });
});
