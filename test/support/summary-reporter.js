import { mkdirSync, writeFileSync } from 'node:fs';

/** The plain line CI reads: `N passed, N failed, N skipped` (failed counts suites that could not run; skipped, tests skipped or todo). */
export function summaryLine(results) {
  const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
  const skipped = results.numPendingTests + results.numTodoTests;
  return `${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped`;
}

/** Prints {@link summaryLine} and keeps it in .test-results/summary.txt so .ci/run can repeat it as the very last line. */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const line = summaryLine(results);
    process.stdout.write(`\n${line}\n`);
    mkdirSync('.test-results', { recursive: true });
    writeFileSync('.test-results/summary.txt', `${line}\n`);
  }
}
