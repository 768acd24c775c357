// What a few µs of client work between Redis round trips cost on this machine: one caller sends a
// trivial EVALSHA, does `spin` µs of CPU work, and sends the next; the table shows µs per round
// trip and what it adds beyond the work itself. On a VM whose idle vCPUs halt at once, a reply that
// is not followed by the next command within a few µs lets the server's vCPU halt, and waking it
// costs the next round trip tens of µs: one caller's throughput is not linear in client CPU.
//   node bench/think-time.mjs [--rounds 5] [--spins 0,5,10,20,40]
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { startRedis } from './lib/redis-server.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, spins: { type: 'string', default: '0,5,10,20,40' } },
});
const spins = values.spins.split(',').map(Number);
const median = (list) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)];
const spin = (us) => {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
};

const redis = await startRedis();
const { Redis } = await import('ioredis');
const client = new Redis(redis.url);
try {
  const sha = await client.script('LOAD', 'return 1');
  const perRoundTrip = Object.fromEntries(spins.map((us) => [us, []]));
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const us of round % 2 ? [...spins].reverse() : spins) {
      for (let i = 0; i < 300; i++) await client.evalsha(sha, 1, 'k', 'v');
      let trips = 0;
      const startedAt = performance.now();
      while (performance.now() - startedAt < 1000) {
        spin(us);
        await client.evalsha(sha, 1, 'k', 'v');
        trips++;
      }
      perRoundTrip[us].push(((performance.now() - startedAt) * 1000) / trips);
    }
  }
  console.log(
    `one caller, trivial EVALSHA, ${values.rounds} interleaved rounds of 1 s, medians (node ${process.version})`,
  );
  console.log('client work between round trips µs | µs per round trip | beyond the work');
  for (const us of spins) {
    const trip = median(perRoundTrip[us]);
    console.log(
      `${String(us).padStart(34)} | ${trip.toFixed(1).padStart(17)} | ${(trip - us).toFixed(1).padStart(15)}`,
    );
  }
} finally {
  client.disconnect();
  redis.stop();
}
