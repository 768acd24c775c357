// Two builds of this library side by side on PostgreSQL, MariaDB and etcd (bench/ab.mjs does Redis): each
// round runs each build in fresh processes, in alternating order, on one local server per store:
//   throughput: acquire+release on fresh keys, `--callers` loops in one process (the lock path's cost);
//   contended: 3 processes, one loop each, on ONE key for `--seconds` (hand-offs, fairness, the longest
//   a process went without the lock while the others took it).
// Prints the medians and the median of per-round paired ratios (B ÷ A). A build is an esm entry point
// inside this repository (so that it finds the drivers in node_modules), e.g. a copy of dist/:
//   cp -r dist node_modules/.ab-before && (change, npm run build)
//   node bench/store-ab.mjs --a node_modules/.ab-before/esm/index.js --b dist/esm/index.js [--store mysql] [--rounds 5]
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd } from './lib/etcd-server.mjs';
import { startMariadb } from './lib/mariadb-server.mjs';
import { startPostgres } from './lib/postgres-server.mjs';
import { runSlot, startSlot } from './lib/spawn-slot.mjs';
import { median, pairedRatio } from './lib/stats.mjs';
import { analyse } from './workloads/contended.mjs';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/esm/index.js' },
    store: { type: 'string', default: 'postgres,mysql' },
    callers: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '1.5' },
  },
});
if (!values.a) throw new Error('--a <esm index.js of the build to compare against> is required');
const builds = { A: resolve(values.a), B: resolve(values.b) };
const seconds = Number(values.seconds);
const servers = {
  postgres: async () => ({ ...(await startPostgres()), url: undefined }),
  mysql: startMariadb,
  etcd: startEtcd,
};

/** The longest a process went without the lock while the others held it, in ms. */
function longestShutOut(holds, processes) {
  const sorted = [...holds].sort((a, b) => a[1] - b[1]);
  let longest = 0;
  for (let p = 0; p < processes; p++) {
    const mine = sorted.filter(([worker]) => worker === p).map(([, at]) => at);
    const edges = [sorted[0][1], ...mine, sorted.at(-1)[1]];
    for (let i = 1; i < edges.length; i++) longest = Math.max(longest, edges[i] - edges[i - 1]);
  }
  return longest;
}

async function contended(spec) {
  const key = `bench:store-contended:${randomBytes(4).toString('hex')}`;
  const slots = [0, 1, 2].map((p) =>
    startSlot({ ...spec, workload: 'contended', seconds, workers: 1, workerBase: p, key, sync: true }),
  );
  await Promise.all(slots.map((slot) => slot.line('READY')));
  for (const slot of slots) slot.child.stdin.write('go\n');
  const results = await Promise.all(slots.map((slot) => slot.result));
  const holds = results.flatMap((result) => result.holds);
  const windowStart = Math.max(...results.map((result) => result.startedAt));
  const windowEnd = Math.min(...results.map((result) => result.until));
  const inWindow = holds.filter(([, at]) => at >= windowStart && at <= windowEnd);
  return { ...analyse(holds, 3, windowStart, windowEnd), shutOutMs: longestShutOut(inWindow, 3) };
}

for (const store of values.store.split(',')) {
  const server = await servers[store]();
  const url = server.url ?? server.connectionString;
  try {
    const results = { A: [], B: [] };
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const name of round % 2 ? ['B', 'A'] : ['A', 'B']) {
        // The slots' child processes load the build named here (package-under-test.mjs).
        process.env.NDL_BENCH_DIST = builds[name];
        const spec = { contender: `ours-${store}`, url };
        const { opsPerSec } = await runSlot({
          ...spec,
          workload: 'throughput',
          callers: Number(values.callers),
          seconds,
        });
        results[name].push({ opsPerSec, ...(await contended(spec)) });
      }
    }
    const column = (name, field) => results[name].map((result) => result[field]);
    console.log(`\n${store}: ${values.rounds} rounds of ${seconds} s, fresh processes per run`);
    for (const [field, label] of [
      ['opsPerSec', `acquire+release/s, fresh keys, ${values.callers} caller(s)`],
      ['acqPerSec', 'contended acquisitions/s (3 processes, one key)'],
      ['fairness', 'contended fairness (fewest / most holds of a process)'],
      ['shutOutMs', 'contended: longest a process went without the lock, ms'],
    ]) {
      const [a, b] = [column('A', field), column('B', field)];
      console.log(
        `${label}: A ${median(a).toFixed(2)}, B ${median(b).toFixed(2)}, B ÷ A ${pairedRatio(b, a).toFixed(2)}x (B rounds: ${b.map((v) => v.toFixed(1)).join(', ')})`,
      );
    }
  } finally {
    await server.stop();
  }
}
