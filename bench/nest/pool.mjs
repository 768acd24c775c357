// Pools several `bench:nest --json` runs into one paired table: on a noisy machine, more rounds than
// one run affords. Each round is paired within its own run (contenders interleaved there), so a
// burst of other work hits both sides of a pair; runs may hold different contenders.
//   node bench/nest/pool.mjs --base anchan828 [--as new=head] [--workload distinct] run1.json run2.json ...
// --as a=b counts contender a as b (the same build under another name in another run).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { median, quantile, round } from '../lib/stats.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    base: { type: 'string', default: 'anchan828' },
    as: { type: 'string', multiple: true, default: [] },
    workload: { type: 'string', default: 'distinct' },
  },
});
if (positionals.length === 0) throw new Error('give one or more files written by bench:nest --json');
const alias = new Map(values.as.map((pair) => pair.split('=')));
const name = (contender) => alias.get(contender) ?? contender;

/** Per contender: its ratios to the base, one per round it shared with the base, and its own p99 and heap. */
const pooled = new Map();
for (const file of positionals) {
  const { results } = JSON.parse(readFileSync(file, 'utf8'));
  const rounds = new Map();
  for (const result of results.filter((r) => r.workload === values.workload)) {
    if (!rounds.has(result.round)) rounds.set(result.round, new Map());
    rounds.get(result.round).set(name(result.contender), result);
  }
  for (const round of rounds.values()) {
    const base = round.get(values.base);
    if (!base) continue;
    for (const [contender, result] of round) {
      if (!pooled.has(contender)) pooled.set(contender, { rps: [], cpu: [], p99: [], heap: [] });
      const into = pooled.get(contender);
      into.rps.push(result.rps / base.rps);
      into.cpu.push(result.cpuUsPerRequest / base.cpuUsPerRequest);
      into.p99.push(result.p99);
      into.heap.push(result.heapKbPerRequest);
    }
  }
}

const quartiles = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${round(quantile(sorted, 0.25), 2)}-${round(quantile(sorted, 0.75), 2)}`;
};
console.log(`### ${values.workload}: ${positionals.length} runs pooled, paired with ${values.base} round by round\n`);
console.log(
  `| contender | rounds | req/s ÷ ${values.base} (median; quartiles) | CPU/req ÷ ${values.base} (median) | p99 ms (median) | heap KB/req (median) |`,
);
console.log('|---|--:|---|--:|--:|--:|');
for (const [contender, { rps, cpu, p99, heap }] of pooled) {
  console.log(
    `| ${contender} | ${rps.length} | ${round(median(rps), 3)}x (${quartiles(rps)}) | ${round(median(cpu), 3)}x | ${round(median(p99), 1)} | ${round(median(heap), 1)} |`,
  );
}
