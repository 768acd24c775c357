// How fast a freshly started app reaches its steady cost: the same route as bench/nest/run.mjs (distinct keys), each
// contender in a fresh process per round (contenders interleaved, order alternating), loaded in consecutive blocks of
// a fixed number of requests. Per block: the app's CPU per request, its median over rounds, and the median of the
// paired ratios to --base (CPU per request, not requests/s: a fixed amount of work, timed by the app's own clock). A process serves its first blocks with code V8 has not optimised yet: a contender whose
// first blocks cost much more than its last warms up slower, which a bench with a short warm-up counts against it.
//   npm run build && node bench/nest/warmup.mjs [--contenders ours,anchan828] [--base anchan828] [--rounds 6]
//     [--blocks 8] [--requests 5000] [--connections 32] [--build name=dir]
import autocannon from 'autocannon';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startRedis } from '../lib/redis-server.mjs';
import { median } from '../lib/stats.mjs';
import { startApp, stopApp } from './app-process.mjs';
import { askStats } from './app-stats.mjs';
import { stageBuild } from './staged-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const { values } = parseArgs({
  options: {
    contenders: { type: 'string', default: 'ours,anchan828' },
    base: { type: 'string', default: 'anchan828' },
    rounds: { type: 'string', default: '6' },
    blocks: { type: 'string', default: '8' },
    requests: { type: 'string', default: '5000' },
    connections: { type: 'string', default: '32' },
    build: { type: 'string', multiple: true, default: [] },
  },
});
const contenders = values.contenders.split(',');
const builds = { ours: join(root, 'dist') };
for (const spec of values.build) {
  const [name, dir] = spec.split('=');
  builds[name] = resolve(dir);
  if (!contenders.includes(name)) contenders.push(name);
}
const [rounds, blocks, requests, connections] = ['rounds', 'blocks', 'requests', 'connections'].map((k) =>
  Number(values[k]),
);

const libs = Object.fromEntries(Object.entries(builds).map(([name, dir]) => [name, stageBuild(name, dir)]));
/** bench/nest/app.mjs's contender for a build name (another build runs as `ours`, with its own LIB). */
const appContender = (name) => (name in builds ? 'ours' : name);

/** One fresh app of `contender`: per block, its CPU µs per request. */
async function warmup(contender, redisUrl, tag) {
  const { child, port } = await startApp({
    CONTENDER: appContender(contender),
    REDIS_URL: redisUrl,
    LIB: libs[contender] ?? libs.ours,
    WORKLOAD: 'distinct',
  });
  const out = [];
  let next = 0;
  try {
    let before = await askStats(child);
    for (let block = 0; block < blocks; block++) {
      await autocannon({
        url: `http://127.0.0.1:${port}`,
        connections,
        amount: requests,
        requests: [
          { method: 'POST', setupRequest: (request) => ({ ...request, path: `/items/${tag}-${next++}/buy` }) },
        ],
      });
      const after = await askStats(child);
      const cpuUs = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
      out.push(cpuUs / (after.handled - before.handled));
      before = after;
    }
  } finally {
    await stopApp(child);
  }
  return out;
}

const redis = await startRedis([], await freePort());
const results = Object.fromEntries(contenders.map((c) => [c, []]));
try {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...contenders].reverse() : contenders;
    for (const contender of order) {
      results[contender].push(await warmup(contender, redis.url, `w${round}-${contender}`));
      process.stderr.write('.');
    }
  }
} finally {
  await redis.stop();
}
process.stderr.write('\n');

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const base = results[values.base];
console.log(
  `# bench:nest warm-up — Node ${process.version}, ${rounds} rounds, blocks of ${fmt(requests)} requests, ${connections} connections; a fresh process per round`,
);
console.log(`\n### app CPU µs per request (median over rounds${base ? `; paired ratio to ${values.base}` : ''})\n`);
const header = Array.from({ length: blocks }, (_, b) => `block ${b + 1}`);
console.log(`| contender | ${header.join(' | ')} |`);
console.log(`|---|${header.map(() => '---:').join('|')}|`);
for (const contender of contenders) {
  const cells = header.map((_, b) => {
    const value = fmt(median(results[contender].map((run) => run[b])));
    if (!base || contender === values.base) return value;
    return `${value} (${fmt(median(results[contender].map((run, round) => run[b] / base[round][b])), 2)}x)`;
  });
  console.log(`| ${contender} | ${cells.join(' | ')} |`);
}
