// Two contenders of bench/nest/run.mjs loaded at the same moments: each round starts a fresh app of each
// (distinct keys, the same app.mjs), then loads both at once, half the connections each, for --duration
// seconds after --warmup. A burst of other work on the machine then hits both apps of a round alike, where
// run.mjs's consecutive runs each catch different bursts: the paired ratios below (A ÷ B, per round, their
// median) are steadier than run.mjs's on a noisy machine. The two apps share the machine's cores, so each
// serves less than alone; CPU per request is the figure that compares them, req/s follows from it.
//   npm run build && node bench/nest/side-by-side.mjs [--a ours] [--b anchan828] [--rounds 10] [--duration 4]
//     [--warmup 1] [--connections 32] [--build name=dir]
import autocannon from 'autocannon';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startRedis } from '../lib/redis-server.mjs';
import { median } from '../lib/stats.mjs';
import { startApp, stopApps } from './app-process.mjs';
import { askStats } from './app-stats.mjs';
import { stageBuild } from './staged-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const OURS_VARIANTS = new Set(['ours', 'ours-unlocked', 'ours-service', 'ours-nomap', 'ours-service-nomap']);
const { values } = parseArgs({
  options: {
    a: { type: 'string', default: 'ours' },
    b: { type: 'string', default: 'anchan828' },
    rounds: { type: 'string', default: '10' },
    duration: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '32' },
    build: { type: 'string', multiple: true, default: [] },
  },
});
const builds = { ours: join(root, 'dist'), ...Object.fromEntries(values.build.map((b) => b.split('='))) };
const libFor = (name) => {
  const build = OURS_VARIANTS.has(name) ? 'ours' : name in builds ? name : undefined;
  return build === undefined ? '' : stageBuild(build, resolve(builds[build]));
};
const contenders = [values.a, values.b];
const libs = Object.fromEntries(contenders.map((name) => [name, libFor(name)]));
const rounds = Number(values.rounds);
const perApp = Math.max(1, Math.floor(Number(values.connections) / 2));

/** Loads every app at once for `seconds`; per app: responses and latencies. */
async function loadTogether(apps, seconds, tag) {
  let next = 0;
  return Promise.all(
    apps.map(async ({ port }) => {
      const latencies = [];
      let ok = 0;
      const instance = autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: perApp,
        duration: seconds,
        requests: [{ method: 'POST', setupRequest: (r) => ({ ...r, path: `/items/${tag}-${next++}/buy` }) }],
      });
      instance.on('response', (_client, status, _bytes, ms) => {
        latencies.push(ms);
        if (status >= 200 && status < 300) ok++;
      });
      await instance;
      return { ok, latencies: Float64Array.from(latencies).sort() };
    }),
  );
}

const redis = await startRedis([], await freePort());
const ratios = { rps: [], cpu: [], p99: [] };
const perContender = Object.fromEntries(contenders.map((name) => [name, { rps: [], cpu: [], p99: [] }]));
console.log(
  `# bench:nest side by side — Node ${process.version}, ${values.a} and ${values.b} loaded at once, ${perApp} connections each, ${rounds} rounds × ${values.duration} s (+${values.warmup} s warm-up)`,
);
try {
  for (let round = 0; round < rounds; round++) {
    // Started in alternating order: the first app started is not always the same contender.
    const order = round % 2 ? [...contenders].reverse() : contenders;
    const apps = [];
    try {
      for (const name of order) {
        const env = { CONTENDER: name, REDIS_URL: redis.url, LIB: libs[name], WORKLOAD: 'distinct' };
        apps.push({ name, ...(await startApp(env)) });
      }
      await loadTogether(apps, Number(values.warmup), `w${round}`);
      const before = await Promise.all(apps.map(({ child }) => askStats(child)));
      const started = process.hrtime.bigint();
      const loads = await loadTogether(apps, Number(values.duration), `r${round}`);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const after = await Promise.all(apps.map(({ child }) => askStats(child)));
      const figures = {};
      apps.forEach(({ name }, i) => {
        const cpuUs = after[i].cpu.user + after[i].cpu.system - before[i].cpu.user - before[i].cpu.system;
        const { ok, latencies } = loads[i];
        figures[name] = {
          rps: ok / seconds,
          cpu: cpuUs / latencies.length,
          p99: latencies[Math.min(latencies.length - 1, Math.floor(0.99 * latencies.length))],
        };
        for (const field of ['rps', 'cpu', 'p99']) perContender[name][field].push(figures[name][field]);
      });
      const [a, b] = contenders.map((name) => figures[name]);
      for (const field of ['rps', 'cpu', 'p99']) ratios[field].push(a[field] / b[field]);
      console.error(
        `round ${round + 1}: ${contenders.map((n) => `${n} ${Math.round(figures[n].rps)} req/s, ${Math.round(figures[n].cpu)} µs CPU/req, p99 ${figures[n].p99.toFixed(1)} ms`).join('; ')}`,
      );
    } finally {
      await stopApps(apps);
    }
  }
} finally {
  redis.stop();
}
const range = (xs) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;
console.log(`\n| contender | req/s | app CPU µs/req | p99 ms |\n|---|---|---|---|`);
for (const name of contenders) {
  const f = perContender[name];
  console.log(
    `| ${name} | ${Math.round(median(f.rps))} | ${Math.round(median(f.cpu))} | ${median(f.p99).toFixed(1)} |`,
  );
}
console.log(
  `\n${values.a} ÷ ${values.b}, paired by round (median, range): req/s ${median(ratios.rps).toFixed(2)}x (${range(ratios.rps)}), ` +
    `CPU/request ${median(ratios.cpu).toFixed(2)}x (${range(ratios.cpu)}), p99 ${median(ratios.p99).toFixed(2)}x (${range(ratios.p99)}); ` +
    `${values.a} served more in ${ratios.rps.filter((r) => r > 1).length} of ${rounds} rounds`,
);
