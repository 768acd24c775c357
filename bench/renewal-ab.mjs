// Two builds of this library side by side on workload 5 (bench/workloads/renewal.mjs): `--locks`
// locks held at once on one local redis-server, each renewed about every third of `--lease` ms;
// each round runs each build in a fresh process, in alternating order. Prints the medians and the
// median of per-round paired ratios (B ÷ A) of the process's CPU and of Redis commands per second.
//   node bench/renewal-ab.mjs --a node_modules/.ab-before/esm/index.js --b dist/esm/index.js [--locks 10000] [--rounds 7]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedis } from './lib/redis-server.mjs';
import { runSlot } from './lib/spawn-slot.mjs';
import { median, pairedRatio } from './lib/stats.mjs';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/esm/index.js' },
    locks: { type: 'string', default: '10000' },
    lease: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '3' },
  },
});
if (!values.a) throw new Error('--a <esm index.js of the build to compare against> is required');
const builds = { A: resolve(values.a), B: resolve(values.b) };

const redis = await startRedis();
try {
  const results = { A: [], B: [] };
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const name of round % 2 ? ['B', 'A'] : ['A', 'B']) {
      process.env.NDL_BENCH_DIST = builds[name];
      results[name].push(
        await runSlot({
          contender: 'ours',
          url: redis.url,
          workload: 'renewal',
          locks: Number(values.locks),
          leaseMs: Number(values.lease),
          windowSeconds: Number(values.seconds),
        }),
      );
    }
  }
  console.log(
    `${values.locks} locks held, lease ${values.lease} ms, ${values.rounds} rounds of ${values.seconds} s, fresh process per run`,
  );
  for (const field of ['cpuMsPerSec', 'redisCommandsPerSec']) {
    const [a, b] = [results.A.map((r) => r[field]), results.B.map((r) => r[field])];
    console.log(
      `${field}: A ${median(a).toFixed(1)}, B ${median(b).toFixed(1)}, B ÷ A ${pairedRatio(b, a).toFixed(2)}x`,
    );
  }
} finally {
  redis.stop();
}
