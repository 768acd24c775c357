// Where each acquire+release spends client CPU, ours vs a peer: each contender runs the workload-1/2
// loop (fresh keys, `--callers` concurrent loops) in this process under the V8 sampling profiler,
// after a warm-up; self time is divided by the operations done and grouped (socket writes, ioredis,
// this library, timers, promises, GC, the rest). Run it on a quiet machine: samples are wall-clock CPU.
//   npm run build && node bench/profile.mjs [--callers 1] [--seconds 4] [--peer raw] [--top 25] [--group 'node timers']
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { startRedis } from './lib/redis-server.mjs';
import { CONTENDERS } from './lib/contenders.mjs';

const { values } = parseArgs({
  options: {
    callers: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '4' },
    peer: { type: 'string', default: 'raw' },
    top: { type: 'string', default: '25' },
    group: { type: 'string', default: 'this library' },
  },
});
const callers = Number(values.callers);

/** The group a profile node's self time belongs to. */
function groupOf({ functionName, url }) {
  if (functionName === '(idle)') return undefined;
  if (/writeUtf8String|writev|writeBuffer|handleWriteReq|createWriteWrap|writevGeneric/.test(functionName))
    return 'socket writes (syscalls)';
  if (url.includes('/ioredis/') || url.includes('/redis-parser/') || url.includes('/redis-errors/')) return 'ioredis';
  if (url.includes('/dist/esm/') || url.includes('/dist/cjs/')) return 'this library';
  if (url.includes('/redis-semaphore/') || url.includes('/redlock/') || url.includes('/bench/'))
    return 'peer library and bench loop';
  if (/timers|priority_queue/.test(url) || /unenroll|setTimeout|clearTimeout|toggleTimerRef/.test(functionName))
    return 'node timers';
  if (/runMicrotasks|processTicksAndRejections|nextTick/.test(functionName)) return 'promises and ticks';
  if (functionName === '(garbage collector)') return 'garbage collection';
  return 'other (node internals, reads, event loop)';
}

async function profile(name, url) {
  const lock = await CONTENDERS[name].open({ url });
  let seq = 0;
  const key = () => `bench:profile:${name}:${seq++}`;
  for (let i = 0; i < 3000; i++) await (await lock.acquire(key()))();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  await session.post('Profiler.start');
  let ops = 0;
  const cpu = process.cpuUsage();
  const until = performance.now() + Number(values.seconds) * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        await (
          await lock.acquire(key())
        )();
        ops++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  const { profile: samples } = await session.post('Profiler.stop');
  session.disconnect();
  await lock.close();
  const nodes = new Map(samples.nodes.map((node) => [node.id, node.callFrame]));
  const groups = new Map();
  const functions = new Map();
  samples.samples.forEach((id, i) => {
    const frame = nodes.get(id);
    const us = samples.timeDeltas[i] ?? 0;
    const group = groupOf(frame);
    if (!group) return;
    groups.set(group, (groups.get(group) ?? 0) + us);
    if (group !== values.group) return;
    const fn = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/.*\/(dist\/esm|node_modules)\//, '')}:${frame.lineNumber + 1}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  });
  const perOp = (map) => new Map([...map].map(([k, us]) => [k, us / ops]));
  return {
    ops,
    opsPerSec: ops / Number(values.seconds),
    cpuUsPerOp: (used.user + used.system) / ops,
    groups: perOp(groups),
    functions: perOp(functions),
  };
}

const redis = await startRedis();
try {
  const ours = await profile('ours', redis.url);
  const peer = await profile(values.peer, redis.url);
  const row = (label, a, b) =>
    `${label.padEnd(44)} | ${a.toFixed(1).padStart(6)} | ${b.toFixed(1).padStart(6)} | ${(a - b >= 0 ? '+' : '') + (a - b).toFixed(1)}`;
  console.log(
    `acquire+release, fresh keys, ${callers} caller(s), ${values.seconds} s each after a warm-up (node ${process.version}); µs of client CPU per operation`,
  );
  console.log(`${'group'.padEnd(44)} | ${'ours'.padStart(6)} | ${values.peer.padStart(6)} | difference`);
  const groups = new Set([...ours.groups.keys(), ...peer.groups.keys()]);
  const sum = (map) => [...map.values()].reduce((a, b) => a + b, 0);
  for (const group of [...groups].sort((a, b) => (ours.groups.get(b) ?? 0) - (ours.groups.get(a) ?? 0)))
    console.log(row(group, ours.groups.get(group) ?? 0, peer.groups.get(group) ?? 0));
  console.log(row('all sampled (not idle)', sum(ours.groups), sum(peer.groups)));
  console.log(row('process CPU (user + system)', ours.cpuUsPerOp, peer.cpuUsPerOp));
  console.log(`ops/s while profiled: ours ${ours.opsPerSec.toFixed(0)}, ${values.peer} ${peer.opsPerSec.toFixed(0)}`);
  console.log(`\n${values.group}: functions, µs per operation (top ${values.top}):`);
  for (const [fn, us] of [...ours.functions].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
    console.log(`${us.toFixed(2).padStart(6)}  ${fn}`);
} finally {
  redis.stop();
}
