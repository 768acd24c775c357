import { mkdirSync, writeFileSync } from 'node:fs';

/**
 * Prints the plain line CI reads, `N passed, N failed[, N skipped]`, and keeps it in
 * .test-results/summary.txt so .ci/run can repeat it as the very last line.
 */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `${results.numPassedTests} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : '');
    process.stdout.write(`\n${line}\n`);
    mkdirSync('.test-results', { recursive: true });
    writeFileSync('.test-results/summary.txt', `${line}\n`);
  }
}
