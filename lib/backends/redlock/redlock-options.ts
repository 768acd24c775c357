import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';
import type { RedlockBackendOptions } from '../backend-options.js';

import { checkDriftFactor } from '../drift.js';

/** Default spread of the random back-off after a round lost to a competing contender. */
const DEFAULT_RETRY_JITTER_MS = 100;
/** The per-node timeout never goes above this by default: a round must be much shorter than the lease (antirez suggests 5-50 ms for a 10 s lease). */
const MAX_DEFAULT_NODE_TIMEOUT_MS = 50;
/** ...nor below this, so that a loaded machine's ordinary scheduling delays do not read as a dead node. */
const MIN_DEFAULT_NODE_TIMEOUT_MS = 10;

/** @internal Validated settings; the masters themselves are opened by `openMasters`. */
export interface RedlockSettings {
  readonly masterCount: number;
  readonly quorum: number;
  readonly driftFactor: number;
  readonly nodeTimeoutMs: number | undefined;
  readonly retryJitterMs: number;
}

/** @internal Validates everything but the URLs / clients themselves. Throws InvalidLockArgumentError. */
export function resolveRedlockSettings(options: RedlockBackendOptions): RedlockSettings {
  if (typeof options !== 'object' || options === null)
    throw new InvalidLockArgumentError(`redlock backend: options must be an object, got ${describe(options)}`);
  const { urls, clients } = options;
  if ((urls === undefined) === (clients === undefined)) {
    throw new InvalidLockArgumentError(
      "The 'redlock' backend needs exactly one of `urls` or `clients` (one per independent Redis master)",
    );
  }
  const masters = urls ?? clients;
  if (!Array.isArray(masters) || masters.length === 0) {
    throw new InvalidLockArgumentError(
      `redlock backend: \`${urls ? 'urls' : 'clients'}\` must be a non-empty array, got ${describe(masters)}`,
    );
  }
  if (new Set(masters).size !== masters.length) {
    // The same master twice would let one server cast two votes.
    throw new InvalidLockArgumentError(`redlock backend: \`${urls ? 'urls' : 'clients'}\` lists the same master twice`);
  }
  const masterCount = masters.length;
  const quorum = options.quorum ?? Math.floor(masterCount / 2) + 1;
  if (!Number.isInteger(quorum) || quorum <= masterCount / 2 || quorum > masterCount) {
    throw new InvalidLockArgumentError(
      `redlock backend: \`quorum\` must be an integer above half of the ${masterCount} masters and at most ${masterCount} (two disjoint quorums would break exclusion), got ${describe(options.quorum)}`,
    );
  }
  const driftFactor = checkDriftFactor('redlock', options.driftFactor);
  const { nodeTimeoutMs, retryJitterMs = DEFAULT_RETRY_JITTER_MS } = options;
  if (
    nodeTimeoutMs !== undefined &&
    (typeof nodeTimeoutMs !== 'number' || !Number.isFinite(nodeTimeoutMs) || nodeTimeoutMs <= 0)
  ) {
    throw new InvalidLockArgumentError(
      `redlock backend: \`nodeTimeoutMs\` must be a finite number of ms > 0, got ${describe(nodeTimeoutMs)}`,
    );
  }
  if (typeof retryJitterMs !== 'number' || !Number.isFinite(retryJitterMs) || retryJitterMs < 0) {
    throw new InvalidLockArgumentError(
      `redlock backend: \`retryJitterMs\` must be a finite number of ms >= 0, got ${describe(retryJitterMs)}`,
    );
  }
  return { masterCount, quorum, driftFactor, nodeTimeoutMs, retryJitterMs };
}

/**
 * @internal The per-node timeout of one operation on a lock with this lease: by default a quarter
 * of the lease, within 10..50 ms (so 50 ms for any lease of 200 ms or more). A longer wait for a
 * slow master never endangers exclusion, since the validity subtracts the time the round took; it
 * only spends validity, so it stays a small share of the lease.
 */
export function nodeTimeoutFor(settings: RedlockSettings, leaseMs: number): number {
  if (settings.nodeTimeoutMs !== undefined) return settings.nodeTimeoutMs;
  return Math.min(MAX_DEFAULT_NODE_TIMEOUT_MS, Math.max(MIN_DEFAULT_NODE_TIMEOUT_MS, leaseMs / 4));
}
