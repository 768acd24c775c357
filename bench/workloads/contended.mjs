// Workload 3, one process's share: `workers` loops contending for ONE key. Every hold is recorded
// as [worker, acquiredAt, releaseCalledAt] on the machine-wide monotonic clock; the runner merges
// the holds of all processes and computes hand-offs, fairness and barging (see analyse()).
// `inside`, if given, is the critical section (3c: an INCR, a Redis round trip, as real code has).
import { nowMs } from '../lib/clock.mjs';
import { quantile } from '../lib/stats.mjs';

export async function contended(lock, { seconds, workers, key, workerBase = 0, waitForGo, inside }) {
  await (
    await lock.acquire(`${key}:warm`)
  )();
  if (waitForGo) await waitForGo();
  const holds = [];
  const startedAt = nowMs();
  const until = startedAt + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async (_, index) => {
      const worker = workerBase + index;
      while (nowMs() < until) {
        const release = await lock.acquire(key);
        const hold = [worker, nowMs(), 0];
        holds.push(hold);
        if (inside) await inside();
        hold[2] = nowMs();
        await release();
      }
    }),
  );
  // Microseconds are plenty, and keep the result line short.
  const us = (ms) => Math.round(ms * 1000) / 1000;
  return {
    holds: holds.map(([worker, acquiredAt, releaseCalledAt]) => [worker, us(acquiredAt), us(releaseCalledAt)]),
    startedAt,
    until,
  };
}

/** Hand-off latency (previous holder's release() call → next holder's acquire() resolving), fairness, barging. */
export function analyse(allHolds, workerCount, windowStart, windowEnd) {
  const holds = allHolds.filter((hold) => hold[1] >= windowStart && hold[1] <= windowEnd).sort((a, b) => a[1] - b[1]);
  const span = (windowEnd - windowStart) / 1000;
  const perWorker = new Array(workerCount).fill(0);
  for (const [worker] of holds) perWorker[worker]++;
  const handoffs = [];
  const toOther = [];
  let barged = 0;
  let overlaps = 0;
  for (let i = 1; i < holds.length; i++) {
    const latency = holds[i][1] - holds[i - 1][2];
    if (latency < 0) overlaps++;
    handoffs.push(latency);
    if (holds[i][0] === holds[i - 1][0]) barged++;
    else toOther.push(latency);
  }
  handoffs.sort((a, b) => a - b);
  toOther.sort((a, b) => a - b);
  return {
    acquisitions: holds.length,
    acqPerSec: holds.length / span,
    handoffP50Ms: quantile(handoffs, 0.5),
    handoffP99Ms: quantile(handoffs, 0.99),
    handoffOtherP99Ms: quantile(toOther, 0.99),
    fairness: Math.min(...perWorker) / Math.max(...perWorker),
    minPerWorker: Math.min(...perWorker),
    maxPerWorker: Math.max(...perWorker),
    bargingShare: barged / Math.max(1, holds.length - 1),
    // A hold that starts before the previous one's release was called: a broken lock (or clock skew).
    overlaps,
  };
}
