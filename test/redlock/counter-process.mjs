// A separate OS process that increments a counter kept in a file, `iterations` times, each time
// under the redlock lock `key`: read, yield, write (a lost update shows if two hold it at once).
// An "inside" marker file created with O_EXCL catches overlaps directly.
// argv[2]: JSON { urls, key, keyPrefix, iterations, counterFile, insideFile }. Prints one JSON line at the end.
import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { LockBackendError, LockEngine, createLockBackend } from '../../dist/esm/index.js';

const { urls, key, keyPrefix, iterations, counterFile, insideFile } = JSON.parse(process.argv[2]);
const engine = new LockEngine(await createLockBackend({ type: 'redlock', urls }), { keyPrefix, leaseMs: 5_000, waitMs: 60_000 });
let overlaps = 0;
let lost = 0;
const started = performance.now();
let backendErrors = 0;
const increment = (lock) => {
  let marked = false;
  try {
    closeSync(openSync(insideFile, 'wx'));
    marked = true;
  } catch {
    overlaps++;
  }
  const value = Number(readFileSync(counterFile, 'utf8'));
  return delay(1).then(() => {
    writeFileSync(counterFile, String(value + 1));
    if (lock.signal.aborted) lost++;
    if (marked) unlinkSync(insideFile);
  });
};
for (let i = 0; i < iterations; ) {
  let done = false;
  try {
    await engine.withLock(key, async (lock) => {
      await increment(lock);
      done = true;
    });
  } catch (error) {
    // Too few masters answered in time (a loaded machine): as an app would, try again; the parent reports the count.
    if (!(error instanceof LockBackendError)) throw error;
    backendErrors++;
  }
  if (done) i++;
}
await engine.close();
process.stdout.write(JSON.stringify({ pid: process.pid, overlaps, lost, backendErrors, ms: Math.round(performance.now() - started) }) + '\n');
