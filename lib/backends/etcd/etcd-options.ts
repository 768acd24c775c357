import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';
import type { EtcdBackendOptions } from '../backend-options.js';

export const DEFAULT_LEASE_TTL_SECONDS = 10;
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

export interface ResolvedEtcdOptions {
  readonly hosts: string[];
  readonly leaseTtlSeconds: number;
  readonly requestTimeoutMs: number;
}

/** Validates the etcd backend options (InvalidLockArgumentError on anything wrong) and fills in defaults. */
export function resolveEtcdOptions(options: EtcdBackendOptions): ResolvedEtcdOptions {
  const { hosts, leaseTtlSeconds = DEFAULT_LEASE_TTL_SECONDS, requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS } = options;
  const list = typeof hosts === 'string' ? [hosts] : hosts;
  if (!Array.isArray(list) || list.length === 0 || !list.every((host) => typeof host === 'string' && /^https?:\/\/\S+$/.test(host))) {
    throw new InvalidLockArgumentError(`etcd backend: hosts must be a URL or a non-empty array of URLs like 'http://127.0.0.1:2379', got ${describe(hosts)}`);
  }
  if (new Set(list.map((host) => host.startsWith('https:'))).size > 1) {
    throw new InvalidLockArgumentError('etcd backend: hosts must be all http:// or all https://');
  }
  if (!Number.isInteger(leaseTtlSeconds) || leaseTtlSeconds < 1 || leaseTtlSeconds > 9_000_000_000) {
    throw new InvalidLockArgumentError(`etcd backend: leaseTtlSeconds must be a whole number of seconds >= 1, got ${describe(leaseTtlSeconds)}`);
  }
  if (typeof requestTimeoutMs !== 'number' || !Number.isFinite(requestTimeoutMs) || requestTimeoutMs <= 0) {
    throw new InvalidLockArgumentError(`etcd backend: requestTimeoutMs must be a finite number of milliseconds > 0, got ${describe(requestTimeoutMs)}`);
  }
  return { hosts: [...list], leaseTtlSeconds, requestTimeoutMs };
}
