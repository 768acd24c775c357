import { validityAfterDrift } from '../drift.js';

export { driftMs } from '../drift.js';

/**
 * @internal How long a lock set on a quorum is surely held, counted from the start of the round
 * that set it: the keys were written at or after that moment with a TTL of `leaseMs`, and any
 * master's clock may run fast by the drift. The caller subtracts the time the round took.
 */
export function validityFromRoundStart(leaseMs: number, driftFactor: number): number {
  return validityAfterDrift(leaseMs, driftFactor);
}

/**
 * @internal When the lock may next be free for us: the time until `quorum` masters are free.
 * `freeMasters` answered free (we took and gave back those); `holderTtls` are the remaining
 * leases reported by the masters that answered busy. Undefined when the answers cannot tell.
 */
export function timeUntilQuorumFree(
  quorum: number,
  freeMasters: number,
  holderTtls: readonly (number | undefined)[],
): number | undefined {
  const needed = quorum - freeMasters;
  if (needed <= 0) return 0;
  const known = holderTtls.filter((ttl): ttl is number => ttl !== undefined).sort((x, y) => x - y);
  return known.length >= needed ? known[needed - 1] : undefined;
}
