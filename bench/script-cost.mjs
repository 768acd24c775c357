// redis-server's time per script call (INFO commandstats, EVALSHA usec_per_call) for this library's
// acquire and release scripts on fresh keys, and for scripts that each leave out one of the acquire
// script's guarantees, so that the server's share of one caller's gap (bench/ladder.mjs) can be put
// on each piece. Calls go out 500 at a time (the server's time per call, not round trips, is measured);
// alternating rounds, medians.
//   npm run build && node bench/script-cost.mjs [--calls 10000] [--rounds 7]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { startRedis } from './lib/redis-server.mjs';
import { median } from './lib/stats.mjs';
import { COMPARE_AND_DELETE } from './lib/contenders.mjs';
import { packageUrl } from './lib/package-under-test.mjs';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '7' } },
});
const internal = (path) => import(new URL(path, packageUrl).href);
const { acquireLock } = await internal('./backends/redis/acquire.js');
const { releaseLockHeard } = await internal('./backends/redis/release.js');
const { redisLockKeys } = await internal('./backends/redis/redis-keys.js');
const { counterTtlMs } = await internal('./backends/redis/lua-fence.js');
const { Redis } = await import('ioredis');

const LEASE_MS = 10_000;
const IDLE_MS = 3_600_000;
const BATCH = 500;

// The acquire script's path for a free key, written out piece by piece (KEYS and ARGV as the library's).
const EFFECTS = 'if redis.replicate_commands then redis.replicate_commands() end ';
const NO_READERS_OR_QUEUE = "redis.call('EXISTS', KEYS[3], KEYS[4]) == 0";
const TAKE = "redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])";
const CLOCK_FENCE =
  "local time = redis.call('TIME') local last = time[1] * 1000000 + time[2] redis.call('SET', KEYS[2], last, 'PX', ARGV[5], 'NX') return last";
const fastPath = ({ effects = true, check = true, fence = CLOCK_FENCE } = {}) =>
  `${effects ? EFFECTS : ''}if ${check ? `${NO_READERS_OR_QUEUE} and ` : ''}${TAKE} then ${fence} end return 0`;

const FLOOR = fastPath({ effects: false, check: false, fence: "return redis.call('INCR', KEYS[2])" });

// [label, script, declared keys (5: the library's)]
const ACQUIRE_VARIANTS = [
  ['the fast path written out (EXISTS; SET NX PX; TIME; SET counter NX PX)', fastPath()],
  ['  without the readers/queue check (EXISTS)', fastPath({ check: false })],
  ['  without replicate_commands()', fastPath({ effects: false })],
  [
    '  a counter that never expires (SET counter NX, no PX)',
    fastPath({ fence: CLOCK_FENCE.replace(", 'PX', ARGV[5]", '') }),
  ],
  [
    '  a counter without the clock floor (INCR, no TIME, no expiry)',
    fastPath({ fence: "return redis.call('INCR', KEYS[2])" }),
  ],
  ['the floor: SET NX PX + INCR, nothing else', FLOOR],
  ['  the same with the 2 keys it uses declared, not 5', FLOOR, 2],
];

const server = await startRedis();
const client = new Redis(server.url, { enableAutoPipelining: false });
client.defineCommand('casDel', COMPARE_AND_DELETE);
for (const [index, [, lua, numberOfKeys = 5]] of ACQUIRE_VARIANTS.entries())
  client.defineCommand(`variant${index}`, { numberOfKeys, lua });

let seq = 0;
const freshKeys = () => redisLockKeys(`bench:script:${seq++}`);
const owner = () => `bench-host:1234||${randomUUID()}`;
const calls = Number(values.calls);

/** Runs `one(i)` for i in [0, calls), BATCH at a time. */
async function inBatches(one) {
  for (let done = 0; done < calls; done += BATCH) {
    await Promise.all(Array.from({ length: Math.min(BATCH, calls - done) }, (_, i) => one(done + i)));
  }
}

/** A row that takes `calls` fresh keys with `acquire(keys, owner)`. */
const acquiring = (acquire) => ({ run: () => inBatches(() => acquire(freshKeys(), owner())) });

/** A row that releases `calls` keys with `release(keys, owner)`, held beforehand with SET, their fence counters too (not measured). */
const releasing = (release) => ({
  async prepare() {
    const held = Array.from({ length: calls }, () => [freshKeys(), owner()]);
    const fence = Date.now() * 1000;
    await inBatches((i) =>
      Promise.all([
        client.set(held[i][0].lock, held[i][1], 'PX', LEASE_MS),
        client.set(held[i][0].fence, fence + i, 'PX', counterTtlMs(IDLE_MS, LEASE_MS)),
      ]),
    );
    return held;
  },
  run: (held) => inBatches((i) => release(...held[i])),
});

const rows = [
  [
    'acquire, this library',
    acquiring((keys, holder) =>
      acquireLock(client, keys, {
        owner: holder,
        leaseMs: LEASE_MS,
        mode: 'exclusive',
        policy: 'found',
        idleKeyTtlMs: IDLE_MS,
      }),
    ),
  ],
  ...ACQUIRE_VARIANTS.map(([label, , numberOfKeys = 5], index) => [
    label,
    acquiring((keys, holder) => {
      const declared = [keys.lock, keys.fence, keys.readers, keys.queue, keys.queueExpiry].slice(0, numberOfKeys);
      return client[`variant${index}`](...declared, holder, LEASE_MS, 'x', 1, counterTtlMs(IDLE_MS, LEASE_MS));
    }),
  ]),
  // The idle time: the counter's TTL becomes idleKeyTtlMs from the release (builds before that ignore the argument).
  [
    'release, this library (GET; DEL; PEXPIRE counter by the idle time and how far the fence ran ahead; PUBLISH)',
    releasing((keys, holder) => releaseLockHeard(client, keys, holder, undefined, IDLE_MS, 0)),
  ],
  [
    '  ahead unknown: the counter read again (GET; DEL; TIME, GET, PEXPIRE counter; PUBLISH)',
    releasing((keys, holder) => releaseLockHeard(client, keys, holder, undefined, IDLE_MS)),
  ],
  ['  without the idle time (GET; DEL; PUBLISH)', releasing((keys, holder) => releaseLockHeard(client, keys, holder))],
  ['release, raw compare-and-delete (GET; DEL)', releasing((keys, holder) => client.casDel(keys.lock, holder))],
];

try {
  const results = rows.map(() => []);
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = rows.map((_, index) => index);
    if (round % 2) order.reverse();
    for (const index of order) {
      const { prepare, run } = rows[index][1];
      // Every row starts from an empty keyspace: a growing one costs rehashing that lands on whichever row runs then.
      await client.flushall('SYNC');
      const prepared = await prepare?.();
      await client.config('RESETSTAT');
      await run(prepared);
      results[index].push(
        Number(
          /cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(await client.info('commandstats'))?.[1],
        ),
      );
    }
  }
  console.log(
    `redis-server µs per EVALSHA on fresh keys (node ${process.version}); medians of ${values.rounds} alternating rounds of ${calls} calls`,
  );
  console.log('| script | µs per call |\n|---|--:|');
  rows.forEach(([label], index) => console.log(`| ${label} | ${median(results[index]).toFixed(2)} |`));
} finally {
  client.disconnect();
  server.stop();
}
