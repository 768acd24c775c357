import type { BackendConfig } from '../lib/index.js';

/** Where the sample app keeps its locks and its stock: memory (one process) or a shared Redis. */
export interface SampleConfig {
  readonly backend: BackendConfig;
  /** Redis for the stock too, when the locks are in Redis: several instances must share it. */
  readonly redisUrl?: string;
  /** Simulated work between reading and writing the stock (a payment call, say), in ms. */
  readonly workMs: number;
  /** The TCP port of the warehouse microservice (delivery messages); none when unset. */
  readonly warehousePort?: number;
  /** The module's stopAcceptingOnShutdown (default on; STOP_ACCEPTING=0 shows what a deploy meets without it). */
  readonly stopAccepting?: boolean;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): SampleConfig {
  const workMs = Number(env.WORK_MS ?? 2);
  const warehousePort = env.WAREHOUSE_PORT ? Number(env.WAREHOUSE_PORT) : undefined;
  const stopAccepting = env.STOP_ACCEPTING !== '0';
  if (env.LOCK_BACKEND === 'redis' || env.REDIS_URL) {
    const url = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    return { backend: { type: 'redis', url }, redisUrl: url, workMs, warehousePort, stopAccepting };
  }
  return { backend: { type: 'memory' }, workMs, warehousePort, stopAccepting };
}
