import { createHash } from 'node:crypto';

/** @internal The Redis names that belong to one lock. They share one hash tag, so one cluster slot. */
export interface RedisLockKeys {
  /** Holds the owner id of an exclusive (or write) holder, with the lease as its TTL. */
  readonly lock: string;
  /** The fence counter: advanced on every acquisition; expires once the key has been idle (see lua-fence.ts). */
  readonly fence: string;
  /** Pub/sub channel on which a release is announced (a channel, not a key). */
  readonly channel: string;
  /** Sorted set of read holders: owner → lease expiry (ms, Redis clock). Expires with its longest lease. */
  readonly readers: string;
  /** Sorted set of queued waiters: mode letter + owner → arrival number. */
  readonly queue: string;
  /** Sorted set of the same waiters → expiry of their place (ms, Redis clock), refreshed while they wait. */
  readonly queueExpiry: string;
  /** Set by a refused claim, for as long as it may sleep: the release announces itself only then (waiting-flag.ts). */
  readonly waiting: string;
}

/**
 * @internal Derives the lock's names from the store key (keyPrefix + the caller's key).
 *
 * A store key without braces, made of well-formed UTF-16, becomes the hash tag itself: `{lock:orders:42}`,
 * readable for operators. Any other key is hashed into the tag: a brace inside the tag would end it early
 * (splitting a lock's keys across slots), and a lone surrogate would not survive UTF-8, so two keys could
 * meet. The hash is of the UTF-16 code units, so it is injective in practice. The hashed form is followed
 * by `#`, which a plain form never has after its tag, so the two forms cannot collide.
 */
export function redisLockKeys(storeKey: string): RedisLockKeys {
  const tag = isPlainTag(storeKey)
    ? `{${storeKey}}`
    : `{${createHash('sha256').update(Buffer.from(storeKey, 'utf16le')).digest('base64url')}}#`;
  return {
    lock: tag,
    fence: `${tag}:fence`,
    channel: `${tag}:released`,
    readers: `${tag}:readers`,
    queue: `${tag}:queue`,
    queueExpiry: `${tag}:queue-expiry`,
    waiting: `${tag}:waiting`,
  };
}

/** A brace, or a lone surrogate (in a `u` regex, only unpaired halves match `\p{Cs}`). */
const NEEDS_HASH = /[{}]|\p{Cs}/u;
/** A brace or any surrogate half: a quick test that most keys pass, before the exact one. */
const MAY_NEED_HASH = /[{}\ud800-\udfff]/;

function isPlainTag(storeKey: string): boolean {
  return !MAY_NEED_HASH.test(storeKey) || !NEEDS_HASH.test(storeKey);
}
