import { fileURLToPath } from 'node:url';
import { runWorkers } from './worker-processes.js';

const script = fileURLToPath(new URL('./counter-worker.mjs', import.meta.url));

/** Where the shared counter lives (see counter-store.mjs). */
export type CounterSpec =
  | { readonly store: 'redis'; readonly url: string; readonly key: string }
  | {
      readonly store: 'sql';
      readonly type: 'postgres' | 'mysql';
      readonly url: string;
      readonly name: string;
      readonly poolSize: number;
    }
  | { readonly store: 'file'; readonly path: string; readonly insideFile: string };

/** The experiment: `processes` OS processes x `workers` loops x `iterations` read-increment-writes of one counter. */
export interface CounterExperiment {
  readonly processes: number;
  readonly workers: number;
  readonly iterations: number;
  readonly counter: CounterSpec;
  /** The lock backend's createLockBackend config (a SQL counter brings its own, on its pool). */
  readonly backend?: Record<string, unknown>;
  readonly key: string;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly waitMs: number;
  /** Increment without any lock (shows that the experiment can fail). Default true. */
  readonly lock?: boolean;
  /** Each holder waits this long (ms, uniform in [min, max]) between its read and its write. */
  readonly pauseMs: readonly [number, number];
  /** Retry (and count) a LockBackendError, as an app would. */
  readonly retryBackendErrors?: boolean;
  /** Reads the counter's final value in the parent. */
  readFinal(): Promise<number>;
}

/** One locked (or unlocked) increment. `start`/`end`: the Redis server's clock (µs) around it, on a Redis counter. */
export interface Hold {
  readonly worker: number;
  readonly pid: number;
  readonly fence: number | undefined;
  /** The value it read (and wrote + 1). */
  readonly value: number;
  readonly start?: number;
  readonly end?: number;
  /** The lock's signal had aborted by the time it wrote. */
  readonly lost: boolean;
}

/** One process's report. `overlaps`: holds that found another holder inside (a file counter's marker). */
export interface ProcessReport {
  readonly holds: Hold[];
  readonly overlaps: number;
  readonly backendErrors: number;
  readonly ms: number;
}

export interface CounterResult {
  readonly reports: ProcessReport[];
  readonly holds: Hold[];
  /** processes x workers x iterations: the final value when no update is lost. */
  readonly total: number;
  readonly final: number;
}

/** Runs the multi-process counter experiment and resolves every process's report and the counter's final value. */
export async function runCounterExperiment({
  processes,
  readFinal,
  ...params
}: CounterExperiment): Promise<CounterResult> {
  const reports = await runWorkers<ProcessReport>(
    script,
    Array.from({ length: processes }, () => ({ ...params })),
  );
  return {
    reports,
    holds: reports.flatMap((report) => report.holds),
    total: processes * params.workers * params.iterations,
    final: await readFinal(),
  };
}
