/** The counts of a jest run that the summary line reads. */
export interface RunCounts {
  numPassedTests: number;
  numFailedTests: number;
  numRuntimeErrorTestSuites: number;
  numPendingTests: number;
  numTodoTests: number;
}

export function summaryLine(results: RunCounts): string;

export default class SummaryReporter {
  onRunComplete(contexts: unknown, results: RunCounts): void;
}
