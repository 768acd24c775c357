import { InvalidLockArgumentError, StaleFenceError } from '../errors.js';
import type { Lock } from '../engine/lock.js';
import { describe } from '../engine/lock-options.js';
import { fenceOf } from './fence-of.js';
import type { FenceRedisClient } from './fence-redis-client.js';
import { fenceKeyOf } from './redis-fence-key.js';
import { FENCED_DEL, FENCED_HSET, FENCED_SET, fencedEval } from './redis-fence-scripts.js';
import { runFenceScript, type FenceScript } from './run-fence-script.js';

/** How many distinct user scripts `eval` keeps wrapped (and hashed) before it wraps one again. */
const WRAPPED_SCRIPTS = 64;

/**
 * The resource side of fencing tokens on Redis (a single server, or a Cluster through ioredis's
 * `Cluster`): each write is one Lua script that refuses a fence below the highest one accepted for
 * the key, with `StaleFenceError`, and otherwise writes and raises it. The highest fence lives in a
 * key of its own in the same Cluster slot (see docs/fencing.md for its name); it has no TTL, and
 * `del` keeps it, so a stale holder cannot bring a deleted key back.
 */
export class RedisFenceGuard {
  private readonly wrapped = new Map<string, FenceScript>();
  /** The client's `keyPrefix`, which ioredis puts before every key: slots are computed with it. */
  private readonly keyPrefix: string;

  constructor(private readonly client: FenceRedisClient) {
    if (client === null || typeof client !== 'object' || typeof client.evalsha !== 'function') {
      throw new InvalidLockArgumentError(
        `RedisFenceGuard needs an ioredis client (Redis or Cluster), got ${describe(client)}`,
      );
    }
    const prefix = (client as { options?: { keyPrefix?: unknown } }).options?.keyPrefix;
    this.keyPrefix = typeof prefix === 'string' ? prefix : '';
  }

  /** SET `key` `value` (with `PX px` when given), if `fence` is not below the highest accepted for `key`. */
  async set(key: string, value: string, fence: number | Lock, options?: { px?: number }): Promise<void> {
    const px = options?.px;
    if (px !== undefined && (typeof px !== 'number' || !Number.isSafeInteger(px) || px < 1)) {
      throw new InvalidLockArgumentError(
        `RedisFenceGuard.set: \`px\` must be a whole number of ms from 1, got ${describe(px)}`,
      );
    }
    if (typeof value !== 'string')
      throw new InvalidLockArgumentError(`RedisFenceGuard.set: the value must be a string, got ${describe(value)}`);
    await this.run(FENCED_SET, key, [], [value, px === undefined ? '' : px], fence);
  }

  /** DEL `key`, if `fence` is not below the highest accepted for it. The fence key stays. */
  async del(key: string, fence: number | Lock): Promise<void> {
    await this.run(FENCED_DEL, key, [], [], fence);
  }

  /** HSET `key` with `fields`, if `fence` is not below the highest accepted for `key`. */
  async hset(key: string, fields: Record<string, string>, fence: number | Lock): Promise<void> {
    const entries = fields !== null && typeof fields === 'object' ? Object.entries(fields) : [];
    if (entries.length === 0 || entries.some(([, v]) => typeof v !== 'string')) {
      throw new InvalidLockArgumentError(
        `RedisFenceGuard.hset: \`fields\` must be an object of at least one string value, got ${describe(fields)}`,
      );
    }
    await this.run(FENCED_HSET, key, [], entries.flat(), fence);
  }

  /**
   * Runs your Lua `script` with `keys` and `args` as KEYS and ARGV, if `fence` is not below the
   * highest accepted for `keys[0]`, and resolves its result. The fence is kept per `keys[0]`; every
   * key must be in its Cluster slot (give them one hash tag). The script runs as a function body:
   * `return` works as usual; no `#!lua` line.
   */
  async eval(script: string, keys: string[], args: string[], fence: number | Lock): Promise<unknown> {
    if (typeof script !== 'string' || script.trim() === '')
      throw new InvalidLockArgumentError(
        `RedisFenceGuard.eval: the script must be Lua source, got ${describe(script)}`,
      );
    if (!Array.isArray(keys) || keys.length === 0 || !Array.isArray(args)) {
      throw new InvalidLockArgumentError(
        'RedisFenceGuard.eval: `keys` must list at least one key (its first key names the fenced resource) and `args` must be an array',
      );
    }
    return this.run(this.wrap(script), keys[0], keys.slice(1), args, fence);
  }

  private async run(
    script: FenceScript,
    key: string,
    moreKeys: string[],
    args: (string | number)[],
    fence: number | Lock,
  ): Promise<unknown> {
    const fenceKey = fenceKeyOf(key, this.keyPrefix);
    const value = fenceOf(fence);
    const [refused, payload] = (await runFenceScript(
      this.client,
      script,
      [key, ...moreKeys, fenceKey],
      [...args, value],
    )) as [number, unknown];
    if (refused === 1) throw new StaleFenceError(key, value, Number(payload));
    return payload ?? null;
  }

  private wrap(script: string): FenceScript {
    let wrapped = this.wrapped.get(script);
    if (wrapped === undefined) {
      if (this.wrapped.size >= WRAPPED_SCRIPTS) this.wrapped.delete(this.wrapped.keys().next().value!);
      this.wrapped.set(script, (wrapped = fencedEval(script)));
    }
    return wrapped;
  }
}
