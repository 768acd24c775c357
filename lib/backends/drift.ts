import { InvalidLockArgumentError } from '../errors.js';
import { describe } from '../engine/lock-options.js';

/** Default clock drift allowance, as a share of the lease (antirez's Redlock description uses 0.01). */
export const DEFAULT_DRIFT_FACTOR = 0.01;

/** @internal The clock drift allowed for a lease: lease x driftFactor, plus 2 ms for timer granularity (as in antirez's description). */
export function driftMs(leaseMs: number, driftFactor: number): number {
  return leaseMs * driftFactor + 2;
}

/**
 * @internal How long a lease the store counts from at or after the start of the call is surely
 * held by the local clock: the lease, less the drift allowance (the store's clock may run fast
 * against ours by that much).
 */
export function validityAfterDrift(leaseMs: number, driftFactor: number): number {
  return Math.floor(leaseMs - driftMs(leaseMs, driftFactor));
}

/** @internal The `driftFactor` option of the `backend` backend: a number in [0, 1), default 0.01. Throws InvalidLockArgumentError. */
export function checkDriftFactor(backend: string, value: unknown): number {
  const driftFactor = value ?? DEFAULT_DRIFT_FACTOR;
  if (typeof driftFactor !== 'number' || !Number.isFinite(driftFactor) || driftFactor < 0 || driftFactor >= 1) {
    throw new InvalidLockArgumentError(
      `${backend} backend: \`driftFactor\` must be a number in [0, 1), got ${describe(value)}`,
    );
  }
  return driftFactor;
}
