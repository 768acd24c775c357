// The cost of `replicas: { min: 1 }` (a WAIT after every acquisition and renewal): the redis backend
// with and without it, on the same local master with one local replica, in the same run. Rounds
// alternate between the two so that machine noise hits both alike; prints medians and paired ratios.
//   npm run bench:replicas [-- --seconds 2 --rounds 5]
// Workloads as in `npm run bench`: 1 = one caller on fresh keys, 2 = 64 callers on fresh keys,
// 3 = 8 callers contending for one key, each with its own backend (so every hand-off goes through
// Redis: callers of one backend pass the lock on locally, with no write to acknowledge).
import { parseArgs } from 'node:util';
import { loadPackage } from './lib/package-under-test.mjs';
import { startRedis } from './lib/redis-server.mjs';
import { median, pairedRatio, round } from './lib/stats.mjs';
import { analyse, contended } from './workloads/contended.mjs';
import { throughput } from './workloads/throughput.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '2' }, rounds: { type: 'string', default: '5' } },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const CONTENDERS = 8;

const { LockEngine, createLockBackend } = await loadPackage();
const master = await startRedis();
const replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);

async function open(replicas) {
  const engine = new LockEngine(
    await createLockBackend({ type: 'redis', url: master.url, ...(replicas ? { replicas } : {}) }),
    { leaseMs: 10_000, waitMs: 120_000 },
  );
  return {
    async acquire(key) {
      const lock = await engine.acquire(key);
      return () => lock.release();
    },
    close: () => engine.close(),
  };
}

try {
  for (let i = 0; !replica.cli('INFO', 'replication').includes('master_link_status:up'); i++) {
    if (i > 400) throw new Error('the replica did not sync');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const configs = { without: undefined, 'replicas: { min: 1 }': { min: 1, timeoutMs: 1_000 } };
  const names = Object.keys(configs);
  const locks = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await open(configs[name])])));
  const contenders = Object.fromEntries(
    await Promise.all(
      names.map(async (name) => [
        name,
        await Promise.all(Array.from({ length: CONTENDERS }, () => open(configs[name]))),
      ]),
    ),
  );
  const results = {};
  const record = (workload, name, value) =>
    (results[workload] ??= Object.fromEntries(names.map((n) => [n, []])))[name].push(value);
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? [...names].reverse() : names) {
      record('1 caller, fresh keys (ops/s)', name, (await throughput(locks[name], { seconds, callers: 1 })).opsPerSec);
      record(
        '64 callers, fresh keys (ops/s)',
        name,
        (await throughput(locks[name], { seconds, callers: 64 })).opsPerSec,
      );
      const key = `bench:replicas:contended:${round}:${name.length}`;
      const runs = await Promise.all(
        contenders[name].map((lock, i) => contended(lock, { seconds, workers: 1, workerBase: i, key })),
      );
      const stats = analyse(
        runs.flatMap((run) => run.holds),
        CONTENDERS,
        Math.max(...runs.map((run) => run.startedAt)),
        Math.min(...runs.map((run) => run.until)),
      );
      record(`${CONTENDERS} backends, one key (acquisitions/s)`, name, stats.acqPerSec);
      record(`${CONTENDERS} backends, one key (hand-off p50 ms)`, name, stats.handoffP50Ms);
    }
  }
  await Promise.all([...Object.values(locks), ...Object.values(contenders).flat()].map((lock) => lock.close()));
  console.log(
    `redis backend with and without replicas: { min: 1 } (1 local master + 1 local replica), ${rounds} interleaved rounds of ${seconds} s, medians (node ${process.version})`,
  );
  console.log(`workload | without | replicas: { min: 1 } | ratio (paired, median)`);
  for (const [workload, row] of Object.entries(results)) {
    const [plain, acked] = names.map((name) => row[name]);
    console.log(
      `${workload} | ${round(median(plain), 2)} | ${round(median(acked), 2)} | ${round(pairedRatio(acked, plain), 2)}`,
    );
  }
} finally {
  replica.stop();
  master.stop();
}
