// The benchmark suite: every contender side by side, in fresh processes, interleaved rounds.
//   npm run bench                      full run (a few minutes), writes docs/benchmarks.{json,svg,md table}
//   npm run bench -- --quick           smoke run (seconds), same output shape
//   options: --out DIR (default docs/), --contenders a,b (subset), --workloads id,id, --rounds N
// Needs redis-server on PATH and the built package (npm run build; the npm script does it).
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startRedis, redisVersion } from './lib/redis-server.mjs';
import { startSlot, runSlot } from './lib/spawn-slot.mjs';
import { plan, HTTP_CONTENDERS } from './lib/plan.mjs';
import { CONTENDERS } from './lib/contenders.mjs';
import { analyse } from './workloads/contended.mjs';
import { httpLoad } from './workloads/http-load.mjs';
import { summarise, writeReport } from './lib/report.mjs';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: fileURLToPath(new URL('../docs/', import.meta.url)) },
    contenders: { type: 'string' },
    workloads: { type: 'string' },
    rounds: { type: 'string' },
  },
});
const onlyContenders = values.contenders?.split(',');
const onlyWorkloads = values.workloads?.split(',');
const log = (message) => process.stderr.write(`${message}\n`);

const redis = await startRedis();
const startedAt = Date.now();
try {
  const workloads = [];
  for (const workload of plan({ quick: values.quick })) {
    if (onlyWorkloads && !onlyWorkloads.includes(workload.id)) continue;
    const contenders = workload.contenders.filter(
      (name) => !onlyContenders || onlyContenders.includes(name) || workload.kind === 'http',
    );
    const rounds = values.rounds ? Number(values.rounds) : workload.rounds;
    const results = Object.fromEntries(contenders.map((name) => [name, []]));
    log(`${workload.title}: ${contenders.join(', ')} x ${rounds} round(s)`);
    for (let round = 0; round < rounds; round++) {
      const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]);
      for (const name of order) {
        const result = await measure(workload, name);
        results[name].push(result);
        const value = result[workload.metric];
        log(
          `  round ${round + 1} ${name.padEnd(16)} ${typeof value === 'number' ? value.toFixed(value < 10 ? 3 : 0) : value} ${workload.unit}`,
        );
      }
    }
    workloads.push(summarise(workload, results));
  }
  const meta = {
    date: new Date(startedAt).toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt) / 1000),
    command: `npm run bench${values.quick ? ' -- --quick' : ''}`,
    mode: values.quick ? 'quick' : 'full',
    node: process.version,
    redis: redisVersion(),
    cpus: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
  };
  const contenders = Object.fromEntries(
    [...Object.entries(CONTENDERS), ...Object.entries(HTTP_CONTENDERS)].map(([name, c]) => [
      name,
      { label: c.label, note: c.note },
    ]),
  );
  const written = writeReport({ meta, contenders, workloads }, values.out);
  log(`wrote ${written.join(', ')}`);
} finally {
  redis.stop();
}

async function measure(workload, name) {
  const base = { contender: name, url: redis.url };
  if (workload.kind === 'slot' && workload.countKeys) return withKeysLeft(() => runSlot({ ...base, ...workload.spec }));
  if (workload.kind === 'slot')
    return runSlot({ ...base, ...(workload.specFor ? workload.specFor(name) : workload.spec) });
  if (workload.kind === 'http') return measureHttp(workload, name);
  return measureContended(workload, name, base);
}

/** Runs a slot and adds the keys it left in Redis (`keysLeft`), and how many of them never expire (`keysWithoutTtl`). */
async function withKeysLeft(runSlotOnce) {
  const before = keyspace(redis.cli('INFO', 'keyspace'));
  const result = await runSlotOnce();
  const after = keyspace(redis.cli('INFO', 'keyspace'));
  return {
    ...result,
    keysLeft: after.keys - before.keys,
    keysWithoutTtl: after.keys - after.expires - (before.keys - before.expires),
  };
}

/** `keys` and `expires` (keys with a TTL) of db 0, from INFO keyspace. */
function keyspace(info) {
  const match = /db0:keys=(\d+),expires=(\d+)/.exec(info);
  return match ? { keys: Number(match[1]), expires: Number(match[2]) } : { keys: 0, expires: 0 };
}

/** Starts every process of the slot, waits until all are connected and warm, then starts them together. */
async function measureContended(workload, name, base) {
  const key = `bench:contended:${randomBytes(4).toString('hex')}`;
  const insideIncr = workload.insideIncr ? `${key}:count` : undefined;
  const slots = Array.from({ length: workload.processes }, (_, p) =>
    startSlot({
      ...base,
      workload: 'contended',
      seconds: workload.seconds,
      workers: workload.workers,
      workerBase: p * workload.workers,
      key,
      sync: true,
      insideIncr,
    }),
  );
  await Promise.all(slots.map((slot) => slot.line('READY')));
  for (const slot of slots) slot.child.stdin.write('go\n');
  const results = await Promise.all(slots.map((slot) => slot.result));
  const holds = results.flatMap((result) => result.holds);
  // Count only acquisitions inside the common window (the tail, where workers stop, is not steady state).
  const windowStart = Math.max(...results.map((result) => result.startedAt));
  const windowEnd = Math.min(...results.map((result) => result.until));
  const result = analyse(holds, workload.processes * workload.workers, windowStart, windowEnd);
  // Every hold incremented the counter once inside the lock: fewer increments than holds = a lost update.
  if (insideIncr) result.lostUpdates = holds.length - Number(redis.cli('GET', insideIncr));
  return result;
}

async function measureHttp(workload, name) {
  const contender = HTTP_CONTENDERS[name];
  const backend = contender.backend.type === 'redis' ? { type: 'redis', url: redis.url } : contender.backend;
  const slot = startSlot({ workload: 'http', backend });
  try {
    const port = Number(await slot.line('PORT'));
    const serverCpu = {
      start: () => slot.child.stdin.write('mark\n'),
      stop: () => (slot.child.stdin.write('cpu\n'), slot.line('CPU').then(Number)),
    };
    return await httpLoad({ port, route: contender.route, seconds: workload.seconds, serverCpu });
  } finally {
    slot.child.stdin.end();
    await slot.exited;
  }
}
