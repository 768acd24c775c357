import { InvalidLockArgumentError } from '../errors.js';
import { describe } from '../engine/lock-options.js';

/**
 * The name of the key that holds the highest fence accepted for the Redis key `key`, in the same
 * Redis Cluster slot as `key`. `prefix` is the client's `keyPrefix`, which ioredis puts before both.
 * - `prefix + key` has a hash tag `{t}` (the first `{` followed, later, by a `}` with something
 *   between): `{t}:highest-fence:<key>`, which hashes on `t` too;
 * - otherwise `prefix + key` hashes as a whole: `{<prefix + key>}:highest-fence`, whose tag is that.
 * A key that neither fits (a `}` but no tag, e.g. `a}b`) is refused: no other name shares its slot.
 */
export function fenceKeyOf(key: string, prefix = ''): string {
  if (typeof key !== 'string' || key === '')
    throw new InvalidLockArgumentError(`RedisFenceGuard: a key must be a non-empty string, got ${describe(key)}`);
  const full = prefix + key;
  const tag = hashTag(full);
  const name = tag === undefined ? `{${full}}:highest-fence` : `{${tag}}:highest-fence:${key}`;
  if (slotName(prefix + name) !== slotName(full)) {
    throw new InvalidLockArgumentError(
      `RedisFenceGuard: key ${describe(key)} has a '}' but no hash tag, so no other key can share its Cluster slot; give it a tag, e.g. '{name}:...'`,
    );
  }
  return name;
}

/** What Redis Cluster hashes of `key`: its hash tag, or the whole key. */
function slotName(key: string): string {
  return hashTag(key) ?? key;
}

function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}
