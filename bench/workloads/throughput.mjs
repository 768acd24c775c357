// Workloads 1 and 2: acquire+release on fresh keys, by `callers` concurrent loops → ops/s.
import { randomBytes } from 'node:crypto';
import { nowMs } from '../lib/clock.mjs';

// `onStart`, if given, runs after the warm-up, as the measured loop starts (for CPU counters).
export async function throughput(lock, { seconds, callers = 1, warmupSeconds = 0, onStart }) {
  const prefix = `bench:tp:${randomBytes(4).toString('hex')}`;
  // Warm-up: connections, script caches, and the JIT: the same loop for `warmupSeconds` (at least 50
  // operations), so that the measure is of the steady state a server runs in, not of V8 compiling.
  const warmUntil = nowMs() + warmupSeconds * 1000;
  for (let i = 0; i < 50 || nowMs() < warmUntil; i++) await (await lock.acquire(`${prefix}:warm:${i}`))();
  onStart?.();
  let ops = 0;
  const startedAt = nowMs();
  const until = startedAt + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let i = 0; nowMs() < until; i++) {
        const release = await lock.acquire(`${prefix}:${caller}:${i}`);
        await release();
        ops++;
      }
    }),
  );
  const elapsed = (nowMs() - startedAt) / 1000;
  return { ops, seconds: elapsed, opsPerSec: ops / elapsed };
}
