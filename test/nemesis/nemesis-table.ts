import type { NemesisRun } from './nemesis-runner.js';
import { furtherChecks } from './further-checks.js';

/** The store x fault table of docs/faults.md, one row per run. */
export function formatNemesisTable(runs: readonly NemesisRun[]): string {
  const header = ['store', 'fault', 'seed', 'rounds', 'operations', 'acquisitions', 'violations', 'canary anomalies', 'min lost margin ms (from deadline)', 'longest without holder ms', 'recovery after heal ms (cut-off client)', 'held-back checks failed', 's'];
  const lines = runs.map(({ store, fault, seed, report, seconds }) => {
    const recovery = report.recoveries.map((r) => r.targetMs ?? r.anyMs ?? 'none');
    const pending = furtherChecks({ store, fault, seed, report, seconds, file: '' }).filter((c) => !c.passed && c.heldBack).map((c) => c.name);
    return [store, fault, seed, report.meta.rounds, report.operations, report.acquisitions, violationSummary(report.violations), report.canaryAnomalies, report.minLostMarginMs === null ? '-' : `${report.minLostMarginMs} (${report.minDueLostMarginMs})`, Math.round(report.longestWithoutHolderMs), recovery.join(', ') || '-', pending.join('; ') || '-', seconds].map(String);
  });
  return [header, header.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function violationSummary(violations: readonly { kind: string }[]): string {
  if (violations.length === 0) return '0';
  const byKind = new Map<string, number>();
  for (const v of violations) byKind.set(v.kind, (byKind.get(v.kind) ?? 0) + 1);
  return [...byKind].map(([kind, n]) => `${n} ${kind}`).join(', ');
}
