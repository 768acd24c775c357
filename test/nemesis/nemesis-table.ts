import type { NemesisFault, NemesisRun } from './nemesis-runner.js';
import { rowChecks } from './row-checks.js';
import type { StartedStore } from './nemesis-stores.js';

/** The store x fault table of docs/faults.md, one row per run. */
export function formatNemesisTable(
  runs: readonly NemesisRun[],
  store: Pick<StartedStore, 'fenced' | 'unavailableBound'>,
  overlapsExpected: Partial<Record<NemesisFault, string>> = {},
): string {
  const header = [
    'store',
    'fault',
    'seed',
    'rounds',
    'operations',
    'acquisitions',
    'violations',
    'canary anomalies',
    'min lost margin ms (from deadline)',
    'longest without holder ms',
    'first answer after heal ms (cut-off client)',
    'recovery after heal ms',
    'failed checks',
    's',
  ];
  const lines = runs.map((run) => {
    const { report } = run;
    const answers = report.recoveries.map((r) => r.answerMs ?? (r.target === undefined ? '-' : 'none'));
    const recovery = report.recoveries.map((r) => (r.target === undefined ? r.anyMs : r.targetMs) ?? 'none');
    const failed = rowChecks(run, store, overlapsExpected[run.fault])
      .filter((c) => !c.passed)
      .map((c) => `${c.name} (${c.detail})`);
    const margin = report.minLostMarginMs === null ? '-' : `${report.minLostMarginMs} (${report.minDueLostMarginMs})`;
    return [
      run.store,
      run.fault,
      run.seed,
      report.meta.rounds,
      report.operations,
      report.acquisitions,
      violationSummary(report.violations),
      report.canaryAnomalies,
      margin,
      Math.round(report.longestWithoutHolderMs),
      answers.join(', ') || '-',
      recovery.join(', ') || '-',
      failed.join('; ') || '-',
      run.seconds,
    ].map(String);
  });
  return [header, header.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function violationSummary(violations: readonly { kind: string }[]): string {
  if (violations.length === 0) return '0';
  const byKind = new Map<string, number>();
  for (const v of violations) byKind.set(v.kind, (byKind.get(v.kind) ?? 0) + 1);
  return [...byKind].map(([kind, n]) => `${n} ${kind}`).join(', ');
}
