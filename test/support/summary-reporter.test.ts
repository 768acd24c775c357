import { describe, expect, it } from '@jest/globals';
import { summaryLine } from './summary-reporter.js';

const results = (
  counts: Partial<
    Record<
      'numPassedTests' | 'numFailedTests' | 'numRuntimeErrorTestSuites' | 'numPendingTests' | 'numTodoTests',
      number
    >
  >,
) => ({
  numPassedTests: 0,
  numFailedTests: 0,
  numRuntimeErrorTestSuites: 0,
  numPendingTests: 0,
  numTodoTests: 0,
  ...counts,
});

describe('the summary line CI prints last', () => {
  it('counts skipped tests (a nemesis row that cannot inject its fault) apart from passed ones', () => {
    expect(summaryLine(results({ numPassedTests: 40, numPendingTests: 3, numTodoTests: 1 }))).toBe(
      '40 passed, 0 failed, 4 skipped',
    );
  });

  it('says "0 skipped" when nothing was skipped, and counts a suite that could not run as failed', () => {
    expect(summaryLine(results({ numPassedTests: 7, numFailedTests: 1, numRuntimeErrorTestSuites: 2 }))).toBe(
      '7 passed, 3 failed, 0 skipped',
    );
  });
});
