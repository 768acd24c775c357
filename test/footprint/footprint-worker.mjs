// One OS process of the footprint test: locks and releases `count` distinct keys (`<run>:<from + i>`)
// once each, `concurrency` at a time, cycling through `kinds`:
//   plain      acquire + release
//   read       a read lock
//   fair       two fair claims of the key at once (the second queues behind the first)
//   semaphore  a permit of a 2-permit semaphore
// argv[2]: JSON { backend, keyPrefix, run, from, count, concurrency, kinds, leaseMs }.
// Prints {"event":"done","locked":n,"elapsedMs":ms} after closing its engine.
import { LockEngine, createLockBackend } from '../../dist/esm/index.js';

const { backend, keyPrefix, run, from, count, concurrency, kinds, leaseMs } = JSON.parse(process.argv[2]);
const engine = new LockEngine(await createLockBackend(backend), { keyPrefix, leaseMs, waitMs: 30_000 });

const lockOnce = {
  plain: async (key) => (await engine.acquire(key)).release(),
  read: async (key) => (await engine.acquire(key, { mode: 'read' })).release(),
  fair: async (key) => {
    const first = await engine.acquire(key, { fair: true });
    // Its first attempt reaches the store before the release below: refused, it takes a place in the queue.
    const second = engine.acquire(key, { fair: true });
    await first.release();
    await (await second).release();
  },
  semaphore: async (key) => (await engine.semaphore(key, 2)).release(),
};

const startedAt = performance.now();
let next = 0;
let locked = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = from + next++;
      await lockOnce[kinds[i % kinds.length]](`${run}:${i}`);
      locked++;
    }
  }),
);
const elapsedMs = Math.round(performance.now() - startedAt);
await engine.close();
process.stdout.write(JSON.stringify({ event: 'done', locked, elapsedMs }) + '\n');
