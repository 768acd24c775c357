// Where an acquire+release costs CPU, ours vs raw ioredis: client CPU and redis-server CPU per
// operation, for one caller and for 64 concurrent callers (workloads 1 and 2 of `npm run bench`).
// On a 2-core machine both processes saturate a core each at 64 callers, so ops/s there is bounded
// by whichever side costs more per operation; this shows which.
//   npm run bench:cost [-- --seconds 2 --rounds 5]
import { parseArgs } from 'node:util';
import { redisCpuUs, startRedis } from './lib/redis-server.mjs';
import { median } from './lib/stats.mjs';
import { CONTENDERS } from './lib/contenders.mjs';
import { throughput } from './workloads/throughput.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '2' }, rounds: { type: 'string', default: '5' } },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

const redis = await startRedis();
/** redis-server's CPU so far, and the time its commands spent executing, in µs. */
function serverCpu() {
  const commands = [...redis.cli('INFO', 'commandstats').matchAll(/,usec=(\d+),/g)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
  return { cpuUs: redisCpuUs(redis.cli), commandUs: commands };
}

try {
  const names = ['ours', 'raw'];
  const locks = Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, await CONTENDERS[name].open({ url: redis.url })])),
  );
  const results = {};
  for (const callers of [1, 64]) {
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 ? [...names].reverse() : names) {
        let before;
        const onStart = () => (before = { client: process.cpuUsage(), server: serverCpu() });
        const { ops, opsPerSec } = await throughput(locks[name], { seconds, callers, onStart });
        const client = process.cpuUsage(before.client);
        const server = serverCpu();
        const row = (results[`${name} x${callers}`] ??= { opsPerSec: [], clientUs: [], serverUs: [], commandUs: [] });
        row.opsPerSec.push(opsPerSec);
        row.clientUs.push((client.user + client.system) / ops);
        row.serverUs.push((server.cpuUs - before.server.cpuUs) / ops);
        row.commandUs.push((server.commandUs - before.server.commandUs) / ops);
      }
    }
  }
  await Promise.all(Object.values(locks).map((lock) => lock.close()));
  console.log(
    `acquire+release on fresh keys, ${rounds} interleaved rounds of ${seconds} s, medians (node ${process.version}, one client process)`,
  );
  console.log('contender x callers | ops/s | client CPU µs/op | redis-server CPU µs/op | of which executing commands');
  for (const [label, row] of Object.entries(results)) {
    console.log(
      `${label.padEnd(19)} | ${median(row.opsPerSec).toFixed(0).padStart(6)} | ${median(row.clientUs).toFixed(1).padStart(5)} | ${median(row.serverUs).toFixed(1).padStart(5)} | ${median(row.commandUs).toFixed(1).padStart(5)}`,
    );
  }
} finally {
  redis.stop();
}
