// A dependency-free SVG bar chart: one group per throughput workload, one bar per contender,
// each bar's length relative to the best contender of its workload, labelled with its median.

const COLORS = {
  ours: '#d9480f',
  'ours-memory': '#f08c00',
  raw: '#495057',
  semaphore: '#1971c2',
  'semaphore-fast': '#74c0fc',
  redlock: '#2f9e44',
  'redlock-fast': '#8ce99a',
  unguarded: '#495057',
  'locked-memory': '#d9480f',
  'locked-redis': '#f08c00',
};
const escape = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function renderSvg(report) {
  const groups = report.workloads.filter((w) => w.higherIsBetter);
  const width = 900;
  const labelWidth = 170;
  const barMax = width - labelWidth - 140;
  const barHeight = 16;
  const parts = [];
  let y = 40;
  for (const workload of groups) {
    const names = Object.keys(workload.contenders);
    const values = names.map((name) => workload.contenders[name].median[workload.metric] ?? 0);
    const best = Math.max(...values, 1e-9);
    parts.push(`<text x="10" y="${y}" font-weight="bold">${escape(workload.title)} (${escape(workload.unit)})</text>`);
    y += 8;
    names.forEach((name, i) => {
      const value = values[i];
      const length = Math.max(1, (value / best) * barMax);
      const extra =
        workload.contenders[name].median.fairness !== undefined
          ? `  fair ${workload.contenders[name].median.fairness.toFixed(2)}, barging ${(workload.contenders[name].median.bargingShare * 100).toFixed(0)}%`
          : '';
      parts.push(
        `<text x="${labelWidth - 6}" y="${y + 12}" text-anchor="end">${escape(report.contenders[name]?.label ?? name)}</text>`,
      );
      parts.push(
        `<rect x="${labelWidth}" y="${y}" width="${length.toFixed(1)}" height="${barHeight}" fill="${COLORS[name] ?? '#868e96'}"/>`,
      );
      parts.push(
        `<text x="${labelWidth + length + 6}" y="${y + 12}">${Math.round(value).toLocaleString('en-US')}${escape(extra)}</text>`,
      );
      y += barHeight + 4;
    });
    y += 22;
  }
  const height = y + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">nestjs-distributed-lock benchmarks — ${escape(report.meta.date.slice(0, 10))}, node ${escape(report.meta.node)}, redis ${escape(report.meta.redis)} (medians; longer is better)</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
