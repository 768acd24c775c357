// Workload 6: `cycles` acquire/release cycles → heap growth after GC, and handles/timers left open.
import { nowMs } from '../lib/clock.mjs';

export async function memory(lock, { cycles, keys = 1000 }) {
  const gc = globalThis.gc ?? (() => undefined);
  const resources = () => process.getActiveResourcesInfo().filter((type) => type !== 'TTYWrap' && type !== 'PipeWrap');
  for (let i = 0; i < 1000; i++) await (await lock.acquire(`bench:mem:${i % keys}`))();
  gc();
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const resourcesBefore = resources();
  const startedAt = nowMs();
  for (let i = 0; i < cycles; i++) await (await lock.acquire(`bench:mem:${i % keys}`))();
  const elapsed = (nowMs() - startedAt) / 1000;
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const resourcesAfter = resources();
  const count = (list) => list.reduce((acc, type) => ({ ...acc, [type]: (acc[type] ?? 0) + 1 }), {});
  return {
    cycles,
    cyclesPerSec: cycles / elapsed,
    heapGrowthMB: (heapAfter - heapBefore) / 1024 / 1024,
    resourcesBefore: count(resourcesBefore),
    resourcesAfter: count(resourcesAfter),
    leakedHandles: Math.max(0, resourcesAfter.length - resourcesBefore.length),
    gcExposed: typeof globalThis.gc === 'function',
  };
}
