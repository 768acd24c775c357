// What one acquire+release on a fresh key costs, for one or more builds of this library: Redis commands
// per op (INFO commandstats deltas, the scripts' inner calls included), Redis CPU µs per op, client
// CPU µs per op (one loop, this process). Builds run one after another on one redis-server, in
// alternating order over `--rounds`; medians printed.
//   npm run build && node bench/op-cost.mjs [--build dist/esm/index.js ...] [--ops 5000] [--rounds 3]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { startRedis, redisCpuUs } from './lib/redis-server.mjs';
import { median } from './lib/stats.mjs';

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: ['dist/esm/index.js'] },
    ops: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    child: { type: 'string' },
    url: { type: 'string' },
  },
});
const ops = Number(values.ops);

function commandCounts(cli) {
  const counts = {};
  for (const line of cli('INFO', 'commandstats').split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) counts[match[1]] = Number(match[2]);
  }
  return counts;
}

if (values.child) {
  // One build in this process: warm up, then `ops` sequential acquire+release on fresh keys.
  const { LockEngine, createLockBackend } = await import(pathToFileURL(values.child).href);
  const engine = new LockEngine(await createLockBackend({ type: 'redis', url: values.url }), { leaseMs: 10_000 });
  const prefix = `bench:cost:${process.pid}`;
  for (let i = 0; i < 2000; i++) await (await engine.acquire(`${prefix}:warm:${i}`)).release();
  process.send('warm');
  await new Promise((done) => process.once('message', done));
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < ops; i++) await (await engine.acquire(`${prefix}:${i}`)).release();
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  process.send({ clientUs: (used.user + used.system) / ops, wallUs: (elapsed * 1000) / ops });
  await new Promise((done) => process.once('message', done));
  await engine.close();
  process.exit(0);
}

const { fork } = await import('node:child_process');
const redis = await startRedis();
try {
  const results = new Map(values.build.map((build) => [build, []]));
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 ? [...values.build].reverse() : values.build;
    for (const build of order) {
      const child = fork(new URL(import.meta.url).pathname, [
        '--child',
        resolve(build),
        '--url',
        redis.url,
        '--ops',
        String(ops),
      ]);
      const next = () => new Promise((done) => child.once('message', done));
      await next();
      execFileSync('redis-cli', ['-p', String(redis.port), 'CONFIG', 'RESETSTAT']);
      const redisBefore = redisCpuUs(redis.cli);
      child.send('go');
      const client = await next();
      const redisUs = (redisCpuUs(redis.cli) - redisBefore) / ops;
      const counts = commandCounts(redis.cli);
      child.send('stop');
      await new Promise((done) => child.once('exit', done));
      const total = Object.entries(counts)
        .filter(([name]) => name !== 'info' && name !== 'config|resetstat' && name !== 'config')
        .reduce((sum, [, n]) => sum + n, 0);
      results.get(build).push({
        ...client,
        redisUs,
        commands: total / ops,
        detail: Object.fromEntries(
          Object.entries(counts)
            .filter(([name]) => !/^(info|config)/.test(name))
            .map(([name, n]) => [name, +(n / ops).toFixed(2)]),
        ),
      });
    }
  }
  for (const [build, runs] of results) {
    const m = (field) => median(runs.map((run) => run[field]));
    console.log(
      `${build}: ${m('commands').toFixed(2)} commands/op, Redis ${m('redisUs').toFixed(0)} µs/op, client CPU ${m('clientUs').toFixed(0)} µs/op, wall ${m('wallUs').toFixed(0)} µs/op (${runs.length} rounds of ${ops} ops)`,
    );
    console.log(`  ${JSON.stringify(runs.at(-1).detail)}`);
  }
} finally {
  redis.stop();
}
