// Two builds of this library side by side on the HTTP endpoints of workload 4 (bench/workloads/http-server.mjs,
// memory backend): `plain` (no lock) and `locked` (@Locked). Each round runs each build and route in a fresh
// process, in alternating order; prints the medians and the median of per-round paired ratios (B ÷ A) of
// requests/s and of server CPU µs per request.
//   cp -r dist node_modules/.ab-before && (change, npm run build)
//   node bench/ab-http.mjs --a node_modules/.ab-before/esm/index.js --b dist/esm/index.js [--rounds 6] [--seconds 1.5] [--routes plain,locked]
// --noop-interceptor-b: B's app also registers a global interceptor that does nothing (with --b the same build as
// --a, this measures what Nest's interceptor pipeline costs a route by itself).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startSlot } from './lib/spawn-slot.mjs';
import { median } from './lib/stats.mjs';
import { httpLoad } from './workloads/http-load.mjs';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/esm/index.js' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '1.5' },
    routes: { type: 'string', default: 'plain,locked' },
    'noop-interceptor-b': { type: 'boolean', default: false },
  },
});
if (!values.a) throw new Error('--a <esm index.js of the build to compare against> is required');
const builds = { A: resolve(values.a), B: resolve(values.b) };
const routes = values.routes.split(',');
const runs = Object.fromEntries(routes.map((route) => [route, { A: [], B: [] }]));

async function measure(build, route) {
  process.env.NDL_BENCH_DIST = builds[build];
  if (build === 'B' && values['noop-interceptor-b']) process.env.NDL_BENCH_NOOP_INTERCEPTOR = '1';
  else delete process.env.NDL_BENCH_NOOP_INTERCEPTOR;
  const slot = startSlot({ workload: 'http', backend: { type: 'memory' } });
  try {
    const port = Number(await slot.line('PORT'));
    const serverCpu = {
      start: () => slot.child.stdin.write('mark\n'),
      stop: () => (slot.child.stdin.write('cpu\n'), slot.line('CPU').then(Number)),
    };
    return await httpLoad({ port, route, seconds: Number(values.seconds), serverCpu });
  } finally {
    slot.child.stdin.end();
    await slot.exited;
  }
}

for (let round = 0; round < Number(values.rounds); round++) {
  for (const route of routes) {
    for (const build of round % 2 ? ['B', 'A'] : ['A', 'B']) runs[route][build].push(await measure(build, route));
  }
}
for (const route of routes) {
  const { A, B } = runs[route];
  const ratio = (field) => median(B.map((b, i) => b[field] / A[i][field])).toFixed(3);
  const med = (list, field) => median(list.map((run) => run[field])).toFixed(1);
  console.log(
    `${route.padEnd(7)} req/s A ${med(A, 'requestsPerSec')} B ${med(B, 'requestsPerSec')} (B ÷ A paired ${ratio('requestsPerSec')}x); server CPU µs/req A ${med(A, 'serverCpuUsPerRequest')} B ${med(B, 'serverCpuUsPerRequest')} (B ÷ A paired ${ratio('serverCpuUsPerRequest')}x)`,
  );
}
