// One OS process of the fault-injection suite: `workers` concurrent loops, each taking the lock
// `key` and doing one non-atomic read-modify-write of a counter kept by the parent (a fenced
// resource reached over IPC). After the read it asks the parent for a "checkpoint", where the
// parent injects holder faults (SIGKILL, SIGSTOP, or an order to block the event loop).
// With fences the write is sent as it is (the resource must refuse a stale holder); without,
// the holder checks its lease first (the only protection a fence-less lock has).
// argv[2]: JSON { backend, key, keyPrefix, leaseMs, workers, dist? }. Messages: parent -> 'go', 'stop'.
import { setTimeout as delay } from 'node:timers/promises';
import { config, createEngine, ipcChannel } from '../support/worker-bootstrap.mjs';

const { backend, key, keyPrefix, leaseMs, workers } = config;
const engine = await createEngine(backend, { keyPrefix, leaseMs });
const stats = { ops: 0, refused: 0, aborted: 0, skipped: 0, timeouts: 0, errors: {} };
const { rpc, started, stopping, ready, done } = ipcChannel();

function busyLoop(ms) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

async function holdOnce(lock) {
  lock.signal.addEventListener('abort', () => {
    if (lock.signal.reason?.name === 'LockLostError') stats.aborted++;
  });
  const begun = await rpc('begin', { fence: lock.fence });
  if (!begun.ok) return void stats.refused++;
  const { value } = await rpc('read', { section: begun.section });
  await delay(Math.random() * 3);
  const checkpoint = await rpc('checkpoint', { section: begun.section });
  if (checkpoint.blockMs) busyLoop(checkpoint.blockMs);
  if (lock.fence === undefined && (lock.signal.aborted || Date.now() >= lock.expiresAt)) {
    stats.skipped++;
  } else {
    const written = await rpc('write', { section: begun.section, value: value + 1 });
    if (written.ok) stats.ops++;
    else stats.refused++;
  }
  await rpc('end', { section: begun.section });
}

async function loop() {
  while (!stopping.signal.aborted) {
    let lock;
    try {
      lock = await engine.acquire(key, { waitMs: 3_000, signal: stopping.signal });
    } catch (error) {
      if (stopping.signal.aborted) break;
      if (error.name === 'LockTimeoutError') stats.timeouts++;
      else stats.errors[error.name] = (stats.errors[error.name] ?? 0) + 1;
      await delay(50);
      continue;
    }
    try {
      await holdOnce(lock);
    } finally {
      await lock.release().catch((error) => {
        if (error.name !== 'LockLostError')
          stats.errors[`release ${error.name}`] = (stats.errors[`release ${error.name}`] ?? 0) + 1;
      });
    }
  }
}

ready();
await started;
await Promise.all(Array.from({ length: workers }, loop));
await engine.close();
done({ stats });
