// Two builds of this library side by side on workloads 1 and 2 (fresh keys, `--callers` loops): each
// round runs each build in a fresh process, in alternating order, on one local redis-server; prints
// the medians and the median of per-round paired ratios (B ÷ A). A build is an esm entry point inside
// this repository (so that it finds the drivers in node_modules), e.g. a copy of dist/ made before a change:
//   cp -r dist node_modules/.ab-before && (change, npm run build)
//   node bench/ab.mjs --a node_modules/.ab-before/esm/index.js --b dist/esm/index.js [--callers 1] [--rounds 7]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedis } from './lib/redis-server.mjs';
import { runSlot } from './lib/spawn-slot.mjs';
import { median, pairedRatio } from './lib/stats.mjs';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/esm/index.js' },
    callers: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '1.5' },
  },
});
if (!values.a) throw new Error('--a <esm index.js of the build to compare against> is required');
const builds = { A: resolve(values.a), B: resolve(values.b) };

const redis = await startRedis();
try {
  const opsPerSec = { A: [], B: [] };
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const name of round % 2 ? ['B', 'A'] : ['A', 'B']) {
      // The slot's child process loads the build named here (package-under-test.mjs).
      process.env.NDL_BENCH_DIST = builds[name];
      const result = await runSlot({
        contender: 'ours',
        url: redis.url,
        workload: 'throughput',
        callers: Number(values.callers),
        seconds: Number(values.seconds),
      });
      opsPerSec[name].push(result.opsPerSec);
    }
  }
  const ratios = opsPerSec.B.map((b, i) => b / opsPerSec.A[i]);
  console.log(
    `acquire+release on fresh keys, ${values.callers} caller(s), ${values.rounds} rounds of ${values.seconds} s, fresh process per run`,
  );
  console.log(`A ${builds.A}: ${median(opsPerSec.A).toFixed(0)} ops/s`);
  console.log(`B ${builds.B}: ${median(opsPerSec.B).toFixed(0)} ops/s`);
  console.log(
    `B ÷ A: ${pairedRatio(opsPerSec.B, opsPerSec.A).toFixed(2)}x (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
  );
} finally {
  redis.stop();
}
