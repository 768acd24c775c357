// One OS process of the multi-key cross-process test: `workers` concurrent loops, each locking
// `iterations` random pairs/triples of `keys` (in random orders) with one multi-key withLock and
// doing a non-atomic read-modify-write of a counter per key in Redis while holding them.
// argv[2]: JSON { dist?, url, keys, keyPrefix, workers, iterations, seed, boundMs }.
// Prints {"event":"ready"}, waits for "go" on stdin, then prints
// {"event":"done","reads":[{key,fence,read}],"counted":{key:n},"errors":[...],"elapsedMs"}.
import { Redis } from 'ioredis';
import { config, createEngine, doneOnStdout, readyOnStdin } from './worker-bootstrap.mjs';

const { url, keys, keyPrefix, workers, iterations, seed, boundMs } = config;
const engine = await createEngine({ type: 'redis', url }, { keyPrefix, waitMs: 20_000 });
const redis = new Redis(url);
await redis.ping();

/** mulberry32, as in test/contract/multi-key-load.ts. */
function seededRandom(start) {
  let state = start >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

await readyOnStdin();

const reads = [];
const counted = Object.fromEntries(keys.map((key) => [key, 0]));
const errors = [];
const stop = AbortSignal.timeout(boundMs);
const startedAt = performance.now();
await Promise.all(
  Array.from({ length: workers }, async (_, w) => {
    const random = seededRandom(seed + w);
    for (let i = 0; i < iterations && !stop.aborted; i++) {
      const pool = [...keys];
      for (let j = pool.length - 1; j > 0; j--) {
        const r = Math.floor(random() * (j + 1));
        [pool[j], pool[r]] = [pool[r], pool[j]];
      }
      const distinct = pool.slice(0, random() < 0.5 ? 2 : 3);
      try {
        await engine.withLock(
          distinct,
          async (lock) => {
            const values = (await redis.mget(distinct.map((key) => `counter:${key}`))).map(Number);
            distinct.forEach((key, k) => reads.push({ key, fence: lock.fences[key], read: values[k] }));
            await redis.mset(Object.fromEntries(distinct.map((key, k) => [`counter:${key}`, String(values[k] + 1)])));
          },
          { signal: stop },
        );
        for (const key of distinct) counted[key]++;
      } catch (error) {
        errors.push(String(error));
      }
    }
  }),
);
const elapsedMs = Math.round(performance.now() - startedAt);
await engine.close();
await redis.quit();
doneOnStdout({ reads, counted, errors, elapsedMs });
