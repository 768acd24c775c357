#!/usr/bin/env node
// Re-checks nemesis histories offline: node test/nemesis/check.mjs <history.json>...
// Prints each report (without the per-event lists) and exits 1 if any has a violation.
import { readFileSync } from 'node:fs';
import { checkHistory } from './checker.mjs';

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: node test/nemesis/check.mjs <history.json>...\n');
  process.exit(2);
}
let failed = false;
for (const file of files) {
  const report = checkHistory(JSON.parse(readFileSync(file, 'utf8')));
  const { violations, lostMargins, dueLostMargins, freedByHolderMargins, ...summary } = report;
  process.stdout.write(
    `${file}\n${JSON.stringify({ ...summary, firstViolations: violations.slice(0, 5) }, null, 2)}\n`,
  );
  failed ||= report.violationCount > 0;
}
process.exit(failed ? 1 : 0);
