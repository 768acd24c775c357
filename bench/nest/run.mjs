// The same Nest 11 route, POST /items/:id/buy, under each Nest lock library, each contender in its own
// process(es) on one redis-server, loaded by autocannon in paired, interleaved rounds.
// Run from the repo root: `npm run bench:nest` (builds, installs bench/nest on demand). Options: see USAGE.
import autocannon from 'autocannon';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, redisVersion, startRedis } from '../lib/redis-server.mjs';
import { startApps, stopApps } from './app-process.mjs';
import { askStats } from './app-stats.mjs';
import { stageBuild } from './staged-build.mjs';

const USAGE = `node bench/nest/run.mjs [options]
  --contenders a,b,...  default ours,murlock,anchan828,universal,hand,ours-unlocked,none (ours-unlocked: the route takes
                        no lock in an app that imports this library's module); also ours-service (this
                        library's LockService.withLock called in the handler: the engine without the Nest layer)
                        and noop (no lock, an interceptor returning next.handle(): Nest's interceptor pipeline),
                        noop-als (the same with an AsyncLocalStorage in use), none-als (no lock, no interceptor,
                        an AsyncLocalStorage in use), noop2 (two such interceptors),
                        ours-nomap and ours-service-nomap (the module option mapErrors: false)
  --workloads a,b       distinct (a fresh id per request) and/or hot (one id, --procs processes); default both
  --rounds N            default 3        --duration S   seconds measured per run, default 6
  --warmup S            default 1        --connections N  default 32 (split over the processes for hot)
  --procs N             processes per contender for hot, default 3
  --build name=dir      another build of this library as a contender (dir holds esm/), e.g. --build before=node_modules/.ab-before;
                        a name ending in -service or -service-nomap runs it as ours-service or ours-service-nomap
  --json file           also write the results as JSON
  --profile dir         run the apps with --cpu-prof and --heap-prof, profiles written to dir (figures then include the profiler)
  --alloc-profile dir   sample what the measured requests allocate (V8's sampling heap profiler, collected objects
                        included), one file per app and round in dir; summarise with bench/nest/alloc-summary.mjs
  --quick               shorthand for --rounds 2 --duration 3 --warmup 1`;

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const PEERS = new Set(['murlock', 'anchan828', 'universal', 'hand']);
const NAMES = {
  ours: 'ours (@Locked)',
  murlock: 'murlock',
  anchan828: '@anchan828/nest-redlock',
  universal: 'nestjs-redlock-universal',
  hand: 'hand-written interceptor',
  none: 'no lock',
  'ours-unlocked': 'no lock, in an app that imports our module',
  'ours-service': 'ours, LockService.withLock in the handler (no @Locked)',
  noop: 'no lock, an interceptor that does nothing',
  noop2: 'no lock, two interceptors that do nothing',
  'ours-nomap': 'ours (@Locked), mapErrors: false',
  'ours-service-nomap': 'ours, LockService.withLock in the handler, mapErrors: false',
  'noop-als': 'no lock, an interceptor that does nothing, an AsyncLocalStorage in use',
  'none-als': 'no lock, an AsyncLocalStorage in use',
};
/** Contenders that run this build (dist/) another way. */
const OURS_VARIANTS = ['ours-nomap', 'ours-service', 'ours-service-nomap', 'ours-unlocked'];
const DEFAULT_CONTENDERS = ['ours', 'murlock', 'anchan828', 'universal', 'hand', 'ours-unlocked', 'none'];

function parseArgs(argv) {
  const options = {
    contenders: [...DEFAULT_CONTENDERS],
    workloads: ['distinct', 'hot'],
    rounds: 3,
    duration: 6,
    warmup: 1,
    connections: 32,
    procs: 3,
    builds: { ours: join(root, 'dist') },
    json: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i];
    const value = () => argv[++i];
    if (name === '--contenders') options.contenders = value().split(',');
    else if (name === '--workloads') options.workloads = value().split(',');
    else if (name === '--rounds') options.rounds = Number(value());
    else if (name === '--duration') options.duration = Number(value());
    else if (name === '--warmup') options.warmup = Number(value());
    else if (name === '--connections') options.connections = Number(value());
    else if (name === '--procs') options.procs = Number(value());
    else if (name === '--json') options.json = value();
    else if (name === '--profile') options.profile = resolve(value());
    else if (name === '--alloc-profile') options.allocProfile = resolve(value());
    else if (name === '--quick') Object.assign(options, { rounds: 2, duration: 3, warmup: 1 });
    else if (name === '--build') {
      const [build, dir] = value().split('=');
      options.builds[build] = resolve(dir);
      if (!options.contenders.includes(build)) options.contenders.push(build);
    } else {
      console.log(USAGE);
      process.exit(name === '--help' ? 0 : 1);
    }
  }
  return options;
}

function commandCalls(cli) {
  let calls = 0;
  for (const line of cli('INFO', 'commandstats').split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match && match[1] !== 'info') calls += Number(match[2]);
  }
  return calls;
}

/** Loads the apps for `seconds` (connections split over them); resolves per-response latencies and statuses. */
async function load(apps, workload, connections, seconds, tag) {
  const latencies = [];
  let ok = 0;
  let failed = 0;
  let next = 0;
  const shares = apps.map((_, i) => Math.floor(connections / apps.length) + (i < connections % apps.length ? 1 : 0));
  await Promise.all(
    apps.map(({ port }, i) => {
      const requests = [
        {
          method: 'POST',
          setupRequest: (request) => ({
            ...request,
            path: workload === 'hot' ? '/items/hot/buy' : `/items/${tag}-${next++}/buy`,
          }),
        },
      ];
      const instance = autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: shares[i],
        duration: seconds,
        requests,
      });
      instance.on('response', (_client, status, _bytes, ms) => {
        latencies.push(ms);
        if (status >= 200 && status < 300) ok++;
        else failed++;
      });
      return instance;
    }),
  );
  return { latencies, ok, failed };
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

async function settleSales(apps) {
  let last = -1;
  for (let i = 0; i < 60; i++) {
    const sold = (await Promise.all(apps.map(({ child }) => askStats(child)))).reduce((sum, s) => sum + s.sold, 0);
    if (sold === last) return sold;
    last = sold;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return last;
}

async function run(contender, lib, workload, options, redis, basePort, round) {
  const count = workload === 'hot' ? options.procs : 1;
  const STOCK = 1_000_000;
  if (workload === 'hot') redis.cli('SET', 'stock:hot', String(STOCK));
  const profileDir = options.profile && join(options.profile, `${contender}-${workload}-c${options.connections}`);
  if (options.allocProfile) mkdirSync(options.allocProfile, { recursive: true });
  const allocProfile =
    options.allocProfile &&
    join(options.allocProfile, `${contender}-${workload}-c${options.connections}-r${round + 1}`);
  const apps = await startApps(
    count,
    (i) => ({
      CONTENDER: contender,
      REDIS_URL: redis.url,
      LIB: lib ?? '',
      WORKLOAD: workload,
      ...(allocProfile ? { ALLOC_PROFILE: `${allocProfile}-${i}.json` } : {}),
    }),
    (i) => ({
      port: basePort === undefined ? undefined : basePort + i,
      execArgv: profileDir
        ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--heap-prof', '--heap-prof-dir', profileDir]
        : [],
    }),
  );
  try {
    await load(apps, workload, options.connections, options.warmup, `w${round}${contender}`);
    const before = await Promise.all(apps.map(({ child }) => askStats(child)));
    const callsBefore = commandCalls(redis.cli);
    const started = process.hrtime.bigint();
    const result = await load(apps, workload, options.connections, options.duration, `r${round}${contender}`);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const calls = commandCalls(redis.cli) - callsBefore;
    const after = await Promise.all(apps.map(({ child }) => askStats(child)));
    const cpuUs = after.reduce(
      (sum, s, i) => sum + s.cpu.user + s.cpu.system - before[i].cpu.user - before[i].cpu.system,
      0,
    );
    const responses = result.ok + result.failed;
    const allocated = after.reduce((sum, s, i) => sum + s.allocated - before[i].allocated, 0);
    const sorted = Float64Array.from(result.latencies).sort();
    const handlerCalls =
      workload === 'hot' ? 2 * (after.reduce((s, a) => s + a.sold, 0) - before.reduce((s, b) => s + b.sold, 0)) : 0;
    let oversold;
    if (workload === 'hot') {
      const sold = await settleSales(apps);
      oversold = sold - (STOCK - Number(redis.cli('GET', 'stock:hot')));
    }
    return {
      contender,
      workload,
      round,
      rps: result.ok / seconds,
      failed: result.failed,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      cpuUsPerRequest: cpuUs / responses,
      heapKbPerRequest: allocated / 1024 / responses,
      // The hot handler's GET and SET are counted from the sales between two reads of the apps' counters: the difference can come out a hair below 0.
      commandsPerRequest: Math.max(0, (calls - handlerCalls) / responses),
      oversold,
    };
  } finally {
    await stopApps(apps);
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const fmt = (value, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '';

function report(results, options) {
  const lines = [];
  for (const workload of options.workloads) {
    const rows = options.contenders.map((contender) => {
      const runs = results.filter((r) => r.contender === contender && r.workload === workload);
      const rps = runs.map((r) => r.rps);
      return {
        contender,
        runs,
        rps: median(rps),
        noise: (Math.max(...rps) - Math.min(...rps)) / median(rps),
        p50: median(runs.map((r) => r.p50)),
        p99: median(runs.map((r) => r.p99)),
        cpu: median(runs.map((r) => r.cpuUsPerRequest)),
        heap: median(runs.map((r) => r.heapKbPerRequest)),
        commands: median(runs.map((r) => r.commandsPerRequest)),
        failed: runs.reduce((sum, r) => sum + r.failed, 0),
        oversold: workload === 'hot' ? Math.max(...runs.map((r) => r.oversold)) : undefined,
      };
    });
    const peers = rows.filter((row) => PEERS.has(row.contender));
    // The baseline of the ratios: each round's fastest peer; without peers, the last contender listed.
    const baseline = peers.length ? peers : rows.slice(-1);
    const baselineName = peers.length
      ? 'fastest peer'
      : (NAMES[rows.at(-1).contender] ?? `ours (${rows.at(-1).contender})`);
    /** Paired: each round's ratio to that round's baseline run, then the median and range over rounds. */
    const paired = (row, field) => {
      const ratios = [];
      for (let round = 0; round < options.rounds; round++) {
        const mine = row.runs.find((r) => r.round === round);
        const runs = baseline.map((p) => p.runs.find((r) => r.round === round)).filter(Boolean);
        if (!mine || !runs.length) continue;
        const best = runs.reduce((a, b) => (b.rps > a.rps ? b : a));
        ratios.push(mine[field] / best[field]);
      }
      if (!ratios.length) return '';
      return `${fmt(median(ratios), 2)}x${ratios.length > 1 ? ` (${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)})` : ''}`;
    };
    const title = workload === 'hot' ? `one hot key, ${options.procs} processes` : 'distinct keys (no contention)';
    lines.push(`### ${title}`, '');
    lines.push(
      `| contender | req/s | req/s ÷ ${baselineName} (paired: median, range) | CPU/req ÷ ${baselineName} (paired) | p50 ms | p99 ms | app CPU µs/req | app heap KB allocated/req | Redis commands/req (lock) | non-2xx | ${workload === 'hot' ? 'oversold | ' : ''}round noise |`,
    );
    lines.push(`|---|---|---|---|---|---|---|---|---|---|${workload === 'hot' ? '---|' : ''}---|`);
    for (const row of rows) {
      const oversold = workload === 'hot' ? `${row.oversold} | ` : '';
      lines.push(
        `| ${NAMES[row.contender] ?? `ours (${row.contender})`} | ${fmt(row.rps)} | ${paired(row, 'rps')} | ${paired(row, 'cpuUsPerRequest')} | ${fmt(row.p50, 1)} | ${fmt(row.p99, 1)} | ${fmt(row.cpu)} | ${fmt(row.heap, 1)} | ${fmt(row.commands, 1)} | ${row.failed} | ${oversold}${fmt(row.noise * 100, 1)} % |`,
      );
    }
    lines.push(
      '',
      `median round-to-round noise (max-min over median req/s): ${fmt(median(rows.map((r) => r.noise)) * 100, 1)} %`,
      '',
    );
    // What importing the module costs a route that takes no lock: the same route with and without it, paired by round.
    const [unlocked, none] = ['ours-unlocked', 'none'].map((name) => rows.find((row) => row.contender === name));
    if (unlocked && none) {
      const byRound = (field) =>
        unlocked.runs.flatMap((run) => {
          const other = none.runs.find((r) => r.round === run.round);
          return other ? [run[field] / other[field]] : [];
        });
      const rps = byRound('rps');
      const cpu = byRound('cpuUsPerRequest');
      lines.push(
        `${NAMES['ours-unlocked']} ÷ ${NAMES.none} (paired by round): req/s ${fmt(median(rps), 2)}x (${fmt(Math.min(...rps), 2)}-${fmt(Math.max(...rps), 2)}), app CPU per request ${fmt(median(cpu), 2)}x (${fmt(Math.min(...cpu), 2)}-${fmt(Math.max(...cpu), 2)})`,
        '',
      );
    }
  }
  return lines.join('\n');
}

const options = parseArgs(process.argv.slice(2));
const libs = {};
for (const [name, dir] of Object.entries(options.builds)) {
  if (
    options.contenders.includes(name) ||
    (name === 'ours' && options.contenders.some((contender) => OURS_VARIANTS.includes(contender)))
  )
    libs[name] = stageBuild(name, dir);
}
for (const variant of OURS_VARIANTS) libs[variant] = libs.ours;
const block = process.env.TEST_PORT_BLOCK;
const base = block === undefined ? 0 : 20000 + 1500 * Number(block) + 1400;
const redisPort = base ? await freePort(base).catch(() => freePort()) : await freePort();
const redis = await startRedis([], redisPort);
// Under the test harness, ports of its block; otherwise a free port per app.
const appPort = base ? base + 10 : undefined;
console.log(
  `# bench:nest — Node ${process.version}, redis-server ${redisVersion()}, ${options.connections} connections, ${options.rounds} rounds × ${options.duration} s (+${options.warmup} s warm-up), contenders interleaved`,
);
const results = [];
try {
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 ? [...options.contenders].reverse() : options.contenders;
    for (const workload of options.workloads) {
      for (const contender of order) {
        const result = await run(contender, libs[contender], workload, options, redis, appPort, round);
        results.push(result);
        console.error(
          `round ${round + 1} ${workload} ${contender}: ${fmt(result.rps)} req/s, p99 ${fmt(result.p99)} ms, ${fmt(result.cpuUsPerRequest)} µs CPU/req, ${fmt(result.heapKbPerRequest, 1)} KB/req, ${fmt(result.commandsPerRequest, 1)} cmds/req${result.oversold === undefined ? '' : `, oversold ${result.oversold}`}${result.failed ? `, ${result.failed} non-2xx` : ''}`,
        );
      }
    }
  }
} finally {
  redis.stop();
}
console.log('\n' + report(results, options));
if (options.json) writeFileSync(options.json, JSON.stringify({ options, results }, null, 2));
