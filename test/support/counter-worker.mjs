// One OS process of the multi-process counter experiment (counter-harness.ts): `workers` concurrent
// loops, each doing `iterations` read-increment-writes of a shared counter (counter-store.mjs) inside
// withLock(key), or without any lock when `lock` is false (to show that the experiment can fail).
// argv[2]: JSON { dist?, backend?, counter, key, keyPrefix, leaseMs, waitMs, workers, iterations,
// lock, pauseMs: [min, max], retryBackendErrors? }. `backend` is a createLockBackend config (a SQL
// counter brings its own, on its pool). With `retryBackendErrors` a LockBackendError is retried
// (as an app would) and counted. Prints {"event":"ready"}, waits for "go" on stdin, then prints
// {"event":"done", holds: [{ worker, pid, fence, value, start?, end?, lost }], overlaps, backendErrors, ms}.
import { setTimeout as delay } from 'node:timers/promises';
import { openCounter } from './counter-store.mjs';
import { config, createEngine, doneOnStdout, readyOnStdin } from './worker-bootstrap.mjs';

const {
  counter: spec,
  key,
  keyPrefix,
  leaseMs,
  waitMs,
  workers,
  iterations,
  lock = true,
  pauseMs: [minPause, maxPause],
  retryBackendErrors,
} = config;
const counter = await openCounter(spec);
const engine = await createEngine(counter.backend ?? config.backend, { keyPrefix, leaseMs, waitMs });
let overlaps = 0;
let backendErrors = 0;

/** One read-increment-write; `held` is the lock (undefined without one). */
async function increment(worker, held) {
  const inside = counter.enter?.() ?? true;
  if (!inside) overlaps++;
  const start = await counter.clock?.();
  const value = await counter.read();
  // Give the other holders every chance to interleave between the read and the write.
  await delay(minPause + Math.random() * (maxPause - minPause));
  await counter.write(value + 1);
  const end = await counter.clock?.();
  if (inside) counter.leave?.();
  return { worker, pid: process.pid, fence: held?.fence, value, start, end, lost: held?.signal.aborted ?? false };
}

async function lockedIncrement(worker) {
  for (;;) {
    try {
      return await engine.withLock(key, (held) => increment(worker, held));
    } catch (error) {
      if (!retryBackendErrors || error.name !== 'LockBackendError') throw error;
      backendErrors++;
    }
  }
}

await readyOnStdin();
const started = performance.now();
const holds = [];
await Promise.all(
  Array.from({ length: workers }, async (_, worker) => {
    for (let i = 0; i < iterations; i++)
      holds.push(lock ? await lockedIncrement(worker) : await increment(worker, undefined));
  }),
);
const ms = Math.round(performance.now() - started);
await engine.close();
await counter.close();
doneOnStdout({ holds, overlaps, backendErrors, ms });
