// What the @Locked endpoint of workload 4 pays for, piece by piece, on the memory backend:
//   node bench/workloads/http-floor.mjs [--rounds 6] [--seconds 1.5]
// Each endpoint of http-server.mjs in a fresh process, interleaved rounds, 32 keep-alive
// connections; prints the median req/s and the median of each round's ratio to `plain`.
// Needs the built package (npm run build, or NDL_BENCH_DIST; see bench/build-private.sh).
import { parseArgs } from 'node:util';
import { startSlot } from '../lib/spawn-slot.mjs';
import { median, pairedRatio } from '../lib/stats.mjs';
import { httpLoad } from './http-load.mjs';

const ROUTES = {
  plain: 'the endpoint without any lock',
  als: 'runs the handler in an AsyncLocalStorage (turns on async hooks, Node < 24)',
  acquire: 'awaits engine.acquire + release around the handler, no async context',
  floor: 'engine.withLock around the handler: the least a lock visible to current() costs',
  handwritten: 'engine.withLock around next.handle() in an interceptor on the route',
  locked: "@Locked('item:{params.id}')",
};

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '6' }, seconds: { type: 'string', default: '1.5' } },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const names = Object.keys(ROUTES);
const results = Object.fromEntries(names.map((name) => [name, []]));
const cpu = Object.fromEntries(names.map((name) => [name, []]));

for (let round = 0; round < rounds; round++) {
  for (const name of names.map((_, i) => names[(i + round) % names.length])) {
    const slot = startSlot({ workload: 'http', backend: { type: 'memory' } });
    try {
      const port = Number(await slot.line('PORT'));
      const serverCpu = {
        start: () => slot.child.stdin.write('mark\n'),
        stop: () => (slot.child.stdin.write('cpu\n'), slot.line('CPU').then(Number)),
      };
      const { requestsPerSec, serverCpuUsPerRequest } = await httpLoad({ port, route: name, seconds, serverCpu });
      results[name].push(requestsPerSec);
      cpu[name].push(serverCpuUsPerRequest);
      process.stderr.write(
        `  round ${round + 1} ${name.padEnd(8)} ${requestsPerSec.toFixed(0)} req/s, ${serverCpuUsPerRequest.toFixed(1)} server CPU µs/request\n`,
      );
    } finally {
      slot.child.stdin.end();
      await slot.exited;
    }
  }
}
for (const name of names) {
  const ratio = pairedRatio(results[name], results.plain);
  console.log(
    `${name.padEnd(11)} ${median(results[name]).toFixed(0).padStart(6)} req/s  ${ratio.toFixed(3)}x plain  ${median(cpu[name]).toFixed(1).padStart(6)} CPU µs/req  ${ROUTES[name]}`,
  );
}
