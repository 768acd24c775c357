// One caller's acquire+release (workload 1) built up step by step from raw ioredis to this library,
// so that each step's cost shows apart: the client's settings, our two scripts, the engine; and, for
// scale, the least that any lock with fences and cross-process wake-ups must send, and
// redis-semaphore's Mutex (workload 1's other yardstick; no fences, no wake-ups: it polls). Every
// step runs in this process against one Redis, in alternating order, `--rounds` times; medians of
// ops/s, client CPU (this process, bench loop included), redis-server CPU and script time per operation.
//   npm run build && node bench/ladder.mjs [--seconds 1.5] [--rounds 7]
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { redisCpuUs, startRedis } from './lib/redis-server.mjs';
import { median } from './lib/stats.mjs';
import { COMPARE_AND_DELETE, CONTENDERS } from './lib/contenders.mjs';
import { packageUrl } from './lib/package-under-test.mjs';
import { throughput } from './workloads/throughput.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '1.5' }, rounds: { type: 'string', default: '7' } },
});
const internal = (path) => import(new URL(path, packageUrl).href);
const { OWNED_CLIENT_OPTIONS } = await internal('./backends/redis/redis-connection.js');
const { acquireLock } = await internal('./backends/redis/acquire.js');
const { releaseLockHeard } = await internal('./backends/redis/release.js');
const { redisLockKeys } = await internal('./backends/redis/redis-keys.js');
const { holderOwnerId, ownerIdPrefix } = await internal('./engine/holder-identity.js');
const { Redis } = await import('ioredis');

async function client(url, options) {
  const created = new Redis(url, options);
  created.defineCommand('casDel', COMPARE_AND_DELETE);
  await created.ping();
  return created;
}

/** SET NX PX, then compare-and-delete: the raw contender's two round trips, on `redis`. */
function setAndDelete(redis) {
  return {
    async acquire(key) {
      const token = randomUUID();
      await redis.set(key, token, 'PX', 10_000, 'NX');
      return () => redis.casDel(key, token);
    },
  };
}

/**
 * Less than any lock with fences and wake-ups can do: one script takes the key and counts a fence
 * (`INCR`: no clock floor, no expiry), one deletes it and publishes (no queue, readers or turns).
 * What it costs over raw is the least a library giving those two guarantees pays.
 */
function fencedAndWaking(redis) {
  redis.defineCommand('fencedTake', {
    numberOfKeys: 2,
    lua: "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return 0",
  });
  redis.defineCommand('wakingRelease', {
    numberOfKeys: 1,
    lua: "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return redis.call('PUBLISH', ARGV[2], 'released') end return -1",
  });
  return {
    async acquire(key) {
      const token = randomUUID();
      await redis.fencedTake(`{${key}}`, `{${key}}:fence`, token, 10_000);
      return () => redis.wakingRelease(`{${key}}`, token, `{${key}}:released`);
    },
  };
}

/** This library's acquire and release scripts, called directly (no engine, no claim). */
function ourScripts(redis) {
  const prefix = ownerIdPrefix(`${hostname()}:${process.pid}`); // as the engine's default instance label
  return {
    async acquire(key) {
      const keys = redisLockKeys(key);
      const owner = holderOwnerId(prefix, undefined);
      await acquireLock(redis, keys, {
        owner,
        leaseMs: 10_000,
        mode: 'exclusive',
        policy: 'found',
        idleKeyTtlMs: 3_600_000,
      });
      return () => releaseLockHeard(redis, keys, owner);
    },
  };
}

const server = await startRedis();
const usage = () => ({
  cpuUs: redisCpuUs(server.cli),
  // A script's time includes its inner commands' (which INFO also counts under their own names).
  scriptUs: Number(/cmdstat_evalsha:calls=\d+,usec=(\d+),/.exec(server.cli('INFO', 'commandstats'))?.[1] ?? 0),
});

const defaults = await client(server.url, {});
const ours = await client(server.url, OWNED_CLIENT_OPTIONS);
const engine = await CONTENDERS.ours.open({ url: server.url });
const semaphore = await CONTENDERS.semaphore.open({ url: server.url });
const steps = [
  ['raw ioredis (SET NX PX + compare-and-delete), ioredis defaults', setAndDelete(defaults)],
  [
    'the least a lock with fences and wake-ups sends (a script: SET NX PX + INCR; compare-and-delete + PUBLISH), ioredis defaults',
    fencedAndWaking(defaults),
  ],
  ['raw, with our client settings (commandTimeout)', setAndDelete(ours)],
  ['our acquire and release scripts, no engine', ourScripts(ours)],
  ['this library (LockEngine, redis backend)', engine],
  ['redis-semaphore Mutex, as npm run bench configures it (a plain ioredis client)', semaphore],
];
const results = steps.map(() => ({ opsPerSec: [], clientUs: [], serverUs: [], scriptUs: [] }));
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = steps.map((_, index) => index);
    if (round % 2) order.reverse();
    for (const index of order) {
      let before;
      const onStart = () => (before = { client: process.cpuUsage(), server: usage() });
      const { ops, opsPerSec } = await throughput(steps[index][1], {
        seconds: Number(values.seconds),
        warmupSeconds: 0.5,
        onStart,
      });
      const client = process.cpuUsage(before.client);
      const after = usage();
      const row = results[index];
      row.opsPerSec.push(opsPerSec);
      row.clientUs.push((client.user + client.system) / ops);
      row.serverUs.push((after.cpuUs - before.server.cpuUs) / ops);
      row.scriptUs.push((after.scriptUs - before.server.scriptUs) / ops);
    }
  }
  console.log(
    `one caller, acquire+release on fresh keys; medians of ${values.rounds} alternating rounds of ${values.seconds} s (node ${process.version})`,
  );
  console.log(
    '| step | ops/s | ÷ raw | client CPU µs/op | redis-server CPU µs/op | of it in scripts (EVALSHA) µs/op |\n|---|--:|--:|--:|--:|--:|',
  );
  const raw = median(results[0].opsPerSec);
  steps.forEach(([label], index) => {
    const row = results[index];
    const ops = median(row.opsPerSec);
    console.log(
      `| ${label} | ${ops.toFixed(0)} | ${(ops / raw).toFixed(2)}x | ${median(row.clientUs).toFixed(1)} | ${median(row.serverUs).toFixed(1)} | ${median(row.scriptUs).toFixed(1)} |`,
    );
  });
} finally {
  await engine.close();
  await semaphore.close();
  defaults.disconnect();
  ours.disconnect();
  server.stop();
}
