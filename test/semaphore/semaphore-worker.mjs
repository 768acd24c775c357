// One OS process of the multi-process semaphore test. argv[2]: JSON { dist, backend, key, keyPrefix,
// leaseMs, permits, mode, workers? }.
// mode 'work': `workers` loops take a permit, tell the parent ('enter', answered before the hold goes
// on), hold it a few ms, tell the parent ('leave', answered before the release), release; until
// the parent sends 'stop'. Then sends { event: 'done', holds: [per worker] }.
// mode 'hold': takes one permit, sends { event: 'held', fence }, and holds it until killed.
import { setTimeout as delay } from 'node:timers/promises';

const { dist, backend, key, keyPrefix, leaseMs, permits, mode, workers = 1 } = JSON.parse(process.argv[2]);
// Only the engine and the backends of the private snapshot (see test/faults/dist-snapshot.ts).
const { LockEngine } = await import(new URL('engine/lock-engine.js', dist).href);
const { createLockBackend } = await import(new URL('backends/create-backend.js', dist).href);
const engine = new LockEngine(await createLockBackend(backend), { keyPrefix, leaseMs });

let nextId = 0;
const pending = new Map();
const rpc = (op) =>
  new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    process.send({ id, op });
  });
const stopping = new AbortController();
let go;
const started = new Promise((resolve) => (go = resolve));
process.on('message', (message) => {
  if (message.reply !== undefined) {
    pending.get(message.reply)?.();
    pending.delete(message.reply);
  } else if (message.cmd === 'go') go();
  else if (message.cmd === 'stop') stopping.abort();
});

if (mode === 'hold') {
  const lock = await engine.semaphore(key, permits, { waitMs: 30_000 });
  process.send({ event: 'held', fence: lock.fence });
  setInterval(() => undefined, 60_000);
} else {
  const holds = Array.from({ length: workers }, () => 0);
  const errors = {};
  const loop = async (worker) => {
    while (!stopping.signal.aborted) {
      let lock;
      try {
        lock = await engine.semaphore(key, permits, { waitMs: 30_000, signal: stopping.signal });
      } catch (error) {
        if (stopping.signal.aborted) break;
        errors[error.name] = (errors[error.name] ?? 0) + 1;
        continue;
      }
      await rpc('enter');
      await delay(5 + Math.random() * 20);
      await rpc('leave');
      holds[worker]++;
      await lock
        .release()
        .catch((error) => (errors[`release ${error.name}`] = (errors[`release ${error.name}`] ?? 0) + 1));
    }
  };
  process.send({ event: 'ready' });
  await started;
  await Promise.all(holds.map((_, worker) => loop(worker)));
  await engine.close();
  process.send({ event: 'done', holds, errors }, () => process.disconnect());
}
