import type { LockEngine } from '../engine/lock-engine.js';
import { isMultiLock } from '../engine/lock.js';

/** A deterministic pseudo-random source (mulberry32), so a failing run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * 2 or 3 distinct keys of `keys`, in a random order; sometimes with the first repeated at the end
 * (a duplicate the engine must take once). Returns the list to lock and its distinct keys.
 */
function randomKeyList(keys: readonly string[], random: () => number): { list: string[]; distinct: string[] } {
  const pool = [...keys];
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  const distinct = pool.slice(0, random() < 0.5 ? 2 : 3);
  return { list: random() < 0.2 ? [...distinct, distinct[0]] : distinct, distinct };
}

interface LoadOptions {
  readonly workersPerEngine: number;
  readonly iterations: number;
  readonly keys: readonly string[];
  readonly seed: number;
  /** The gap between reading and writing the counters: where a missing lock would lose updates. */
  readonly gap: () => Promise<void>;
  /** Workers still running after this long are stopped (their waits aborted), and the run counts as unfinished. */
  readonly boundMs: number;
}

export interface LoadResult {
  readonly acquisitions: number;
  readonly elapsedMs: number;
  /** All workers finished their iterations within `boundMs`. */
  readonly finished: boolean;
  /** Errors (a timeout here would mean a deadlock that lasted the whole waitMs). */
  readonly errors: readonly unknown[];
  readonly expected: Record<string, number>;
  readonly actual: Record<string, number>;
  readonly lostUpdates: number;
  /** Keys whose holds, sorted by fence, did not read 0, 1, 2, ... (two holders at once, or fences out of order). */
  readonly misorderedKeys: readonly string[];
}

/**
 * Workers on every engine repeatedly lock random pairs and triples of `keys`, given in random
 * orders, and do a non-atomic read-modify-write of an in-process counter per key while holding them.
 */
export async function runMultiKeyLoad(engines: readonly LockEngine[], options: LoadOptions): Promise<LoadResult> {
  const counters = new Map(options.keys.map((key) => [key, 0]));
  const expected = Object.fromEntries(options.keys.map((key) => [key, 0]));
  const reads = new Map(options.keys.map((key) => [key, [] as { fence: number; read: number }[]]));
  const errors: unknown[] = [];
  const startedAt = performance.now();
  const stop = new AbortController();
  const bound = setTimeout(
    () => stop.abort(new Error(`still running after ${options.boundMs} ms (deadlock?)`)),
    options.boundMs,
  );
  const workers = engines.flatMap((engine, e) =>
    Array.from({ length: options.workersPerEngine }, async (_, w) => {
      const random = seededRandom(options.seed + e * 1_000 + w);
      for (let i = 0; i < options.iterations && !stop.signal.aborted; i++) {
        const { list, distinct } = randomKeyList(options.keys, random);
        try {
          await engine.withLock(
            list,
            async (lock) => {
              if (!isMultiLock(lock)) throw new Error(`not a multi-lock: ${lock.key}`);
              const values = distinct.map((key) => counters.get(key)!);
              distinct.forEach((key, k) => reads.get(key)!.push({ fence: lock.fences[key]!, read: values[k] }));
              await options.gap();
              distinct.forEach((key, k) => counters.set(key, values[k] + 1));
            },
            { signal: stop.signal },
          );
          for (const key of distinct) expected[key]++;
        } catch (error) {
          errors.push(error);
        }
      }
    }),
  );
  await Promise.all(workers);
  clearTimeout(bound);
  const elapsedMs = Math.round(performance.now() - startedAt);
  const actual = Object.fromEntries(counters);
  const lostUpdates = options.keys.reduce((sum, key) => sum + expected[key] - actual[key], 0);
  const misorderedKeys = options.keys.filter((key) => {
    const holds = reads.get(key)!.sort((x, y) => x.fence - y.fence);
    return holds.some((hold, i) => hold.read !== i);
  });
  return {
    acquisitions: engines.length * options.workersPerEngine * options.iterations,
    elapsedMs,
    finished: !stop.signal.aborted,
    errors,
    expected,
    actual,
    lostUpdates,
    misorderedKeys,
  };
}
