import { InvalidLockArgumentError } from '../errors.js';
import { describe } from '../engine/lock-options.js';

/** How long a key's fence counter (and SQL row) outlives the key's last lease by default: one day. */
export const DEFAULT_IDLE_KEY_TTL_MS = 86_400_000;

/** The longest `idleKeyTtlMs` accepted: a year, far beyond any sensible value, well within every store's limits. */
const MAX_IDLE_KEY_TTL_MS = 31_536_000_000;

/**
 * Validates the `idleKeyTtlMs` option of the stores that keep a fence per key (redis, postgres,
 * mysql): a whole number of ms from 1 to a year, default a day. Any lease length is safe with any
 * value, since the store counts the idle time from the end of the key's last lease.
 * Throws InvalidLockArgumentError.
 */
export function resolveIdleKeyTtlMs(value: unknown, backend: string): number {
  if (value === undefined) return DEFAULT_IDLE_KEY_TTL_MS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_IDLE_KEY_TTL_MS) {
    throw new InvalidLockArgumentError(
      `${backend} backend: \`idleKeyTtlMs\` must be a whole number of ms from 1 to ${MAX_IDLE_KEY_TTL_MS}, got ${describe(value)}`,
    );
  }
  return value;
}
