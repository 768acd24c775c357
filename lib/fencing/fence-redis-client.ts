/**
 * The two ioredis methods a `RedisFenceGuard` uses, typed here so that no declaration refers to the
 * optional `ioredis` package: an ioredis `Redis` (single server or Sentinel) and a `Cluster` both fit.
 */
export interface FenceRedisClient {
  /** Runs a cached script (ioredis `evalsha`). */
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  /** Runs a script (ioredis `eval`). */
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}
