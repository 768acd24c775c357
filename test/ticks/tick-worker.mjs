// One app instance of the scheduled-job tests: fires the job `key` at startAt + i * periodMs + skewMs
// for i < ticks (the injected schedule skew of this instance), as a scheduler with @LockedJob would:
// one attempt, skip when busy, minHoldMs / maxHoldMs as given. Prints one JSON line per event.
// argv[2]: JSON { backend, keyPrefix, key, leaseMs, minHoldMs?, maxHoldMs?, periodMs, ticks, skewMs, jobMs, behaviour }.
// behaviour: 'normal'; 'exit' (the process exits right after its first run released the lock);
// 'hang' (the first run never ends; it reports when its signal aborts).
// IPC from the parent: { startAt } once every instance is ready.
const options = JSON.parse(process.argv[2]);
const { backend, keyPrefix, key, leaseMs, minHoldMs, maxHoldMs, periodMs, ticks, skewMs, jobMs, behaviour } = options;
const root = new URL('../../dist/esm/', import.meta.url).href;
const { LockEngine } = await import(new URL('engine/lock-engine.js', root).href);
const { createLockBackend } = await import(new URL('backends/create-backend.js', root).href);
const engine = new LockEngine(await createLockBackend(backend), { keyPrefix, leaseMs });
const print = (event) => process.stdout.write(`${JSON.stringify({ ...event, at: Date.now() })}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Connections, sessions and tables are set up before the first tick, as in a running app.
await (await engine.acquire(`${key}:warm-up`)).release();
print({ event: 'ready' });
const { startAt } = await new Promise((resolve) => process.once('message', resolve));

let runs = 0;
async function fire(tick) {
  const lock = await engine.tryAcquire(key, { leaseMs, minHoldMs, maxHoldMs });
  if (!lock) return print({ event: 'skipped', tick });
  const first = runs++ === 0;
  print({ event: 'ran', tick, fence: lock.fence });
  if (first && behaviour === 'hang') {
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    print({ event: 'aborted', tick, name: lock.signal.reason?.name, message: lock.signal.reason?.message });
    return new Promise(() => {}); // hung for good
  }
  await sleep(jobMs);
  await lock.release();
  if (first && behaviour === 'exit') {
    print({ event: 'exit', tick });
    process.exit(0);
  }
}

const jobs = [];
for (let tick = 0; tick < ticks; tick++) {
  await sleep(startAt + tick * periodMs + skewMs - Date.now());
  jobs.push(fire(tick).catch((error) => print({ event: 'error', tick, message: String(error?.message ?? error) })));
}
await Promise.race([Promise.all(jobs), sleep(periodMs)]);
print({ event: 'done' });
await engine.close().catch(() => undefined);
process.exit(0);
