// The few ioredis methods this backend uses, typed here so that no declaration refers to the
// optional `ioredis` package. A `Redis`, a Sentinel-configured `Redis` and a `Cluster` all fit.

/** @internal An ioredis `Redis` or `Cluster`, seen structurally. */
export interface RedisClient {
  readonly status: string;
  /** True on an ioredis `Cluster`. */
  readonly isCluster?: boolean;
  /** The client's options (a `Cluster` of ioredis >= 5.9 has `shardedSubscribers` among them). */
  readonly options?: object;
  /** The connection's socket (a plain `Redis`; absent on a `Cluster`). */
  readonly stream?: CorkableStream;
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  ping(): Promise<unknown>;
  subscribe(...channels: string[]): Promise<unknown>;
  unsubscribe(...channels: string[]): Promise<unknown>;
  /** Sharded pub/sub (Redis >= 7); on a Cluster, routed to the channel's shard only with its `shardedSubscribers` option. */
  ssubscribe?(...channels: string[]): Promise<unknown>;
  sunsubscribe?(...channels: string[]): Promise<unknown>;
  /** Any command by name. */
  call?(command: string, ...args: (string | number)[]): Promise<unknown>;
  /** Commands queued and sent in one write by `exec()` (absent on some look-alike clients). */
  pipeline?(): RedisPipeline;
  /**
   * A new connection with the same settings: a plain `Redis` takes option overrides, a `Cluster`
   * other startup nodes (none: the same) then option overrides.
   */
  duplicate(...overrides: unknown[]): RedisClient;
  quit(): Promise<unknown>;
  /** Closes the connection; with `reconnect` true, ioredis connects anew (resubscribing a subscriber). */
  disconnect(reconnect?: boolean): void;
  on(event: string, listener: (...args: any[]) => void): unknown;
  off(event: string, listener: (...args: any[]) => void): unknown;
}

/** @internal A socket whose writes can be held back and sent as one (Node's `Writable.cork()`). */
export interface CorkableStream {
  cork(): void;
  uncork(): void;
}

/** @internal An ioredis pipeline: `exec()` resolves one `[error, reply]` per queued command. */
interface RedisPipeline {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): RedisPipeline;
  /** Any command by name (WAIT, WAITAOF); on a Cluster client it goes with the pipeline's keyed commands. */
  call(command: string, ...args: (string | number)[]): RedisPipeline;
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** @internal The parts of the `ioredis` module namespace used to build a client from a URL. */
export interface IoredisModule {
  Redis?: RedisConstructor;
  default?: RedisConstructor | { Redis?: RedisConstructor };
}

/** @internal */
type RedisConstructor = new (url: string, options: Record<string, unknown>) => RedisClient;

const REQUIRED_METHODS = [
  'evalsha',
  'eval',
  'ping',
  'subscribe',
  'unsubscribe',
  'duplicate',
  'quit',
  'disconnect',
  'on',
  'off',
] as const;

/** @internal Whether `value` has the ioredis methods this backend calls (node-redis, for one, has `evalSha` instead). */
export function looksLikeIoredisClient(value: unknown): value is RedisClient {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return REQUIRED_METHODS.every((method) => typeof candidate[method] === 'function');
}

/**
 * @internal The `Redis` class from `await import('ioredis')`. ioredis is CommonJS: from ESM the
 * namespace has both `Redis` and `default` (= module.exports); from our CJS build `__importStar`
 * gives the same shape. Look in both places, so either build and either major version works.
 */
export function redisConstructorOf(driver: IoredisModule): RedisConstructor | undefined {
  const candidates = [
    driver.Redis,
    (driver.default as { Redis?: RedisConstructor } | undefined)?.Redis,
    driver.default,
  ];
  return candidates.find((candidate): candidate is RedisConstructor => typeof candidate === 'function');
}
