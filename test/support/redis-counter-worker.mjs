// One OS process of the multi-process Redis test: `workers` concurrent workers each do `iterations`
// non-atomic read-modify-writes of a counter in Redis inside withLock, and record every hold.
// argv[2]: JSON { url, key, counterKey, keyPrefix, workers, iterations }.
// Prints {"event":"ready"}, waits for "go" on stdin, then prints {"event":"done","holds":[...]}.
import { Redis } from 'ioredis';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { LockEngine, createLockBackend } from '../../dist/esm/index.js';

const { url, key, counterKey, keyPrefix, workers, iterations } = JSON.parse(process.argv[2]);
const engine = new LockEngine(await createLockBackend({ type: 'redis', url }), { keyPrefix, leaseMs: 10_000, waitMs: 120_000 });
const redis = new Redis(url);
await redis.ping();

// Redis's clock: one clock for every process, so holds can be compared across them.
const serverMicros = async () => {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1_000_000 + Number(micros);
};

process.stdout.write(JSON.stringify({ event: 'ready' }) + '\n');
const stdin = createInterface({ input: process.stdin });
await new Promise((resolve) => stdin.once('line', resolve));
stdin.close();

const holds = [];
await Promise.all(
  Array.from({ length: workers }, async (_, worker) => {
    for (let i = 0; i < iterations; i++) {
      await engine.withLock(key, async (lock) => {
        const start = await serverMicros();
        const value = Number((await redis.get(counterKey)) ?? '0');
        await delay(Math.random() * 2);
        await redis.set(counterKey, String(value + 1));
        const end = await serverMicros();
        holds.push({ fence: lock.fence, start, end, pid: process.pid, worker });
      });
    }
  }),
);
await engine.close();
await redis.quit();
process.stdout.write(JSON.stringify({ event: 'done', holds }) + '\n');
