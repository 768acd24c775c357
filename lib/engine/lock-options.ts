import { InvalidLockArgumentError } from '../errors.js';
import { MAX_TIMER_MS } from '../util/clock.js';
import { LOCK_MODES, type LockMode } from './lock-mode.js';

/** Longest key accepted, in UTF-16 code units. Backends hash long keys where their store needs it. */
const MAX_KEY_LENGTH = 65_536;

export interface ResolvedLockOptions {
  readonly leaseMs: number;
  readonly waitMs: number;
  readonly mode: LockMode;
  readonly fair: boolean;
  /** Permits of a semaphore; undefined for a lock. */
  readonly permits?: number;
  readonly signal?: AbortSignal;
  /** Shown to operators with the holder (`LockService.inspect`); cut to a bounded length when stored. */
  readonly label?: string;
  /** Hold at least this long after the acquisition (see `LockOptions.minHoldMs`). */
  readonly minHoldMs?: number;
  /** Stop renewing this long after the acquisition (see `LockOptions.maxHoldMs`). */
  readonly maxHoldMs?: number;
}

/** Most permits a semaphore may have. */
const MAX_PERMITS = 100_000;

export function assertKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') {
    throw new InvalidLockArgumentError(`Lock key must be a string, got ${describe(key)}`);
  }
  if (key.length === 0) throw new InvalidLockArgumentError('Lock key must not be empty');
  if (key.length > MAX_KEY_LENGTH) {
    throw new InvalidLockArgumentError(
      `Lock key is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are allowed`,
    );
  }
}

/** A lease: a finite number of ms >= 1 that a timer can count (rounded up to whole ms). */
export function checkLeaseMs(value: unknown, what = 'leaseMs'): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidLockArgumentError(`${what} must be a finite number of milliseconds > 0, got ${describe(value)}`);
  }
  if (value > MAX_TIMER_MS)
    throw new InvalidLockArgumentError(`${what} must be at most ${MAX_TIMER_MS} ms, got ${value}`);
  return Math.ceil(value);
}

/** A wait: ms >= 0 (0 = one attempt), or Infinity to wait until acquired. */
export function checkWaitMs(value: unknown, what = 'waitMs'): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new InvalidLockArgumentError(
      `${what} must be a number of milliseconds >= 0 (or Infinity), got ${describe(value)}`,
    );
  }
  return value;
}

/** A semaphore's permits: a whole number from 1 to MAX_PERMITS. */
export function checkPermits(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PERMITS) {
    throw new InvalidLockArgumentError(
      `permits must be a whole number from 1 to ${MAX_PERMITS}, got ${describe(value)}`,
    );
  }
  return value;
}

export function checkMode(value: unknown): LockMode {
  if (!LOCK_MODES.includes(value as LockMode)) {
    throw new InvalidLockArgumentError(
      `mode must be one of ${LOCK_MODES.map((m) => `'${m}'`).join(', ')}, got ${describe(value)}`,
    );
  }
  return value as LockMode;
}

export function resolveLockOptions(
  options: unknown,
  defaults: { leaseMs: number; waitMs: number; maxWaitMs?: number },
): ResolvedLockOptions {
  if (options === undefined)
    return { leaseMs: defaults.leaseMs, waitMs: defaults.waitMs, mode: 'exclusive', fair: false };
  if (typeof options !== 'object' || options === null) {
    throw new InvalidLockArgumentError(`Lock options must be an object, got ${describe(options)}`);
  }
  const { leaseMs, waitMs, mode, fair, permits, signal, label, minHoldMs, maxHoldMs } = options as Record<
    string,
    unknown
  >;
  if (label !== undefined && typeof label !== 'string')
    throw new InvalidLockArgumentError(`label must be a string, got ${describe(label)}`);
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidLockArgumentError(`signal must be an AbortSignal, got ${describe(signal)}`);
  }
  if (fair !== undefined && typeof fair !== 'boolean')
    throw new InvalidLockArgumentError(`fair must be a boolean, got ${describe(fair)}`);
  return {
    leaseMs: leaseMs === undefined ? defaults.leaseMs : checkLeaseMs(leaseMs),
    waitMs: waitMs === undefined ? defaults.waitMs : capWait(checkWaitMs(waitMs), defaults.maxWaitMs),
    mode: mode === undefined ? 'exclusive' : checkMode(mode),
    fair: fair === true,
    permits: permits === undefined ? undefined : checkPermits(permits),
    signal: signal,
    label: label,
    ...checkHoldBounds(minHoldMs, maxHoldMs),
  };
}

/** A wait no longer than `maxWaitMs` (the engine's cap, when it has one). */
export function capWait(waitMs: number, maxWaitMs: number | undefined): number {
  return maxWaitMs !== undefined && waitMs > maxWaitMs ? maxWaitMs : waitMs;
}

/** `minHoldMs` and `maxHoldMs`: each a lease-like duration, and the least hold no longer than the most. */
export function checkHoldBounds(minHoldMs: unknown, maxHoldMs: unknown): { minHoldMs?: number; maxHoldMs?: number } {
  const bounds: { minHoldMs?: number; maxHoldMs?: number } = {};
  if (minHoldMs !== undefined) bounds.minHoldMs = checkLeaseMs(minHoldMs, 'minHoldMs');
  if (maxHoldMs !== undefined) bounds.maxHoldMs = checkLeaseMs(maxHoldMs, 'maxHoldMs');
  if (bounds.minHoldMs !== undefined && bounds.maxHoldMs !== undefined && bounds.minHoldMs > bounds.maxHoldMs) {
    throw new InvalidLockArgumentError(
      `minHoldMs (${bounds.minHoldMs}) must not exceed maxHoldMs (${bounds.maxHoldMs})`,
    );
  }
  return bounds;
}

/** A short description of a bad value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (value === null || value === undefined || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : `an object (${value.constructor?.name ?? 'Object'})`;
}
