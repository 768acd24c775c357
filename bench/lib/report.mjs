// Turns round results into medians and paired ratios, and writes JSON, an SVG chart and a
// Markdown table (also spliced into benchmarks.md between its bench:table markers, if present).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { median, pairedRatio, round } from './stats.mjs';
import { renderSvg } from './svg.mjs';

/** Which contender is "ours" in a workload, for the ratio column. */
export function oursIn(names) {
  return ['ours', 'locked-memory', 'ours-memory'].find((name) => names.includes(name));
}

export function summarise(workload, results) {
  const names = Object.keys(results);
  const contenders = {};
  for (const name of names) {
    const rounds = results[name];
    const fields = Object.keys(rounds[0] ?? {}).filter((field) => typeof rounds[0][field] === 'number');
    const medians = Object.fromEntries(fields.map((field) => [field, round(median(rounds.map((r) => r[field])), 4)]));
    contenders[name] = { median: medians, rounds: rounds.map((r) => roundAll(r)) };
  }
  // The cost per request over a baseline (workload 4: the unguarded endpoint), from the median throughputs.
  if (workload.baseline && contenders[workload.baseline]) {
    const baseline = contenders[workload.baseline].median[workload.metric];
    for (const name of names)
      contenders[name].median.usPerRequestOverBaseline = round(
        1e6 / contenders[name].median[workload.metric] - 1e6 / baseline,
        1,
      );
  }
  const ours = oursIn(names);
  const ratios = {};
  if (ours) {
    const metricOf = (name) => results[name].map((r) => r[workload.metric]);
    for (const name of names) if (name !== ours) ratios[name] = round(pairedRatio(metricOf(ours), metricOf(name)), 3);
  }
  // Further ratios the workload asks for (workload 4: @Locked on redis ÷ the hand-written interceptor on redis).
  const pairs = (workload.pairs ?? [])
    .filter(([a, b]) => results[a] && results[b])
    .map(([a, b]) => {
      const ratioOf = (field) =>
        round(
          pairedRatio(
            results[a].map((r) => r[field]),
            results[b].map((r) => r[field]),
          ),
          3,
        );
      return {
        of: a,
        to: b,
        ratio: ratioOf(workload.metric),
        ...(results[a][0]?.serverCpuUsPerRequest === undefined ? {} : { cpuRatio: ratioOf('serverCpuUsPerRequest') }),
      };
    });
  return {
    id: workload.id,
    title: workload.title,
    metric: workload.metric,
    unit: workload.unit,
    higherIsBetter: workload.higherIsBetter,
    ours,
    contenders,
    ratios,
    pairs,
  };
}

function roundAll(value) {
  if (typeof value === 'number') return round(value, 4);
  if (Array.isArray(value)) return value.map(roundAll);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundAll(v)]));
  return value;
}

const COLUMNS = {
  ops: ['acquisitions', 0],
  opsPerSec: ['ops/s', 0],
  keysLeft: ['keys left in redis', 0],
  keysWithoutTtl: ['of them never expiring', 0],
  acqPerSec: ['acq/s', 0],
  handoffP50Ms: ['hand-off p50 ms', 3],
  handoffP99Ms: ['hand-off p99 ms', 3],
  fairness: ['fairness min/max', 2],
  bargingShare: ['barging', 'pct'],
  overlaps: ['overlaps', 0],
  lostUpdates: ['lost updates', 0],
  requestsPerSec: ['req/s', 0],
  p99Ms: ['p99 ms', 2],
  usPerRequestOverBaseline: ['µs/request over unguarded', 1],
  serverCpuUsPerRequest: ['server CPU µs/request', 1],
  redisCommandsPerSec: ['redis cmd/s', 0],
  cpuMsPerSec: ['CPU ms/s', 1],
  timersWhileHolding: ['timers', 0],
  cycles: ['cycles', 0],
  cyclesPerSec: ['cycles/s', 0],
  heapGrowthMB: ['heap growth MB', 2],
  leakedHandles: ['leaked handles', 0],
};

function format(value, digits) {
  if (value === null || value === undefined) return '–';
  if (digits === 'pct') return `${(value * 100).toFixed(0)}%`;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function markdownTable(report) {
  const lines = [
    `Run ${report.meta.date} (${report.meta.mode}, ${report.meta.durationSeconds} s): node ${report.meta.node}, redis ${report.meta.redis}, ${report.meta.cpus}. Medians over rounds; "ours ÷ it" is the median of per-round paired ratios of the workload's main metric (${'>'}1 = ours higher).`,
    '',
  ];
  for (const workload of report.workloads) {
    const names = Object.keys(workload.contenders);
    const fields = Object.keys(COLUMNS).filter((field) =>
      names.some((name) => workload.contenders[name].median[field] !== undefined),
    );
    lines.push(
      `**${workload.title}** — main metric: ${workload.unit} (${workload.higherIsBetter ? 'higher' : 'lower'} is better)`,
      '',
    );
    lines.push(`| contender | ${fields.map((f) => COLUMNS[f][0]).join(' | ')} | ours ÷ it |`);
    lines.push(`|---|${fields.map(() => '--:').join('|')}|--:|`);
    for (const name of names) {
      const median = workload.contenders[name].median;
      const ratio = workload.ratios[name];
      const label = report.contenders[name]?.label ?? name;
      lines.push(
        `| ${name === workload.ours ? `**${label}**` : label} | ${fields.map((f) => format(median[f], COLUMNS[f][1])).join(' | ')} | ${ratio == null ? '' : `${ratio.toFixed(2)}x`} |`,
      );
    }
    lines.push('');
    const labelOf = (name) => report.contenders[name]?.label ?? name;
    for (const pair of workload.pairs ?? []) {
      const cpu = pair.cpuRatio === undefined ? '' : `, server CPU per request ${pair.cpuRatio.toFixed(2)}x`;
      lines.push(`${labelOf(pair.of)} ÷ ${labelOf(pair.to)}: ${workload.unit} ${pair.ratio.toFixed(2)}x${cpu}`, '');
    }
  }
  return lines.join('\n');
}

export function writeReport(report, outDir) {
  mkdirSync(outDir, { recursive: true });
  const written = [];
  const write = (name, text) => {
    writeFileSync(join(outDir, name), text);
    written.push(join(outDir, name));
  };
  write('benchmarks.json', `${JSON.stringify(report, null, 2)}\n`);
  write('benchmarks.svg', renderSvg(report));
  const table = markdownTable(report);
  const doc = join(outDir, 'benchmarks.md');
  const start = '<!-- bench:table:start -->';
  const end = '<!-- bench:table:end -->';
  if (existsSync(doc) && readFileSync(doc, 'utf8').includes(start)) {
    const text = readFileSync(doc, 'utf8');
    write(
      'benchmarks.md',
      `${text.slice(0, text.indexOf(start) + start.length)}\n${table}\n${text.slice(text.indexOf(end))}`,
    );
  } else {
    write('benchmarks-table.md', `${table}\n`);
  }
  return written;
}
