import { InvalidLockArgumentError } from '../errors.js';
import { describe } from '../engine/lock-options.js';

/**
 * The name of the key that holds the highest fence accepted for the Redis key `key`, in the same
 * Redis Cluster slot as `key`:
 * - `key` has a hash tag `{t}` (the first `{` followed, later, by a `}` with something between):
 *   `{t}:highest-fence:<key>`, which hashes on `t` too;
 * - otherwise `key` hashes as a whole: `{<key>}:highest-fence`, whose tag is `key`. That needs a
 *   `key` without `}`; a key with a `}` but no tag is refused (give it a tag, e.g. `{orders}:a}b`).
 */
export function fenceKeyOf(key: string): string {
  if (typeof key !== 'string' || key === '') throw new InvalidLockArgumentError(`RedisFenceGuard: a key must be a non-empty string, got ${describe(key)}`);
  const tag = hashTag(key);
  if (tag !== undefined) return `{${tag}}:highest-fence:${key}`;
  if (key.includes('}')) {
    throw new InvalidLockArgumentError(
      `RedisFenceGuard: key ${describe(key)} has a '}' but no hash tag, so no other key can share its Cluster slot; give it a tag, e.g. '{name}:...'`,
    );
  }
  return `{${key}}:highest-fence`;
}

/** Redis Cluster's hash tag of `key`, if it has one. */
function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}
