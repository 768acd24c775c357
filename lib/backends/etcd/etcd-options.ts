import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';
import type { EtcdBackendOptions } from '../backend-options.js';

export const DEFAULT_LEASE_TTL_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

interface ResolvedEtcdOptions {
  readonly urls: string[];
  /** `leaseTtlMs` rounded up to whole seconds: etcd counts its leases in seconds. */
  readonly leaseTtlSeconds: number;
  readonly requestTimeoutMs: number;
}

/** Validates the etcd backend options (InvalidLockArgumentError on anything wrong) and fills in defaults. */
export function resolveEtcdOptions(options: EtcdBackendOptions): ResolvedEtcdOptions {
  const { urls, leaseTtlMs = DEFAULT_LEASE_TTL_MS, requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS } = options;
  const list = typeof urls === 'string' ? [urls] : urls;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    !list.every((url) => typeof url === 'string' && /^https?:\/\/\S+$/.test(url))
  ) {
    throw new InvalidLockArgumentError(
      `etcd backend: urls must be a URL or a non-empty array of URLs like 'http://127.0.0.1:2379', got ${describe(urls)}`,
    );
  }
  if (new Set(list.map((url) => url.startsWith('https:'))).size > 1) {
    throw new InvalidLockArgumentError('etcd backend: urls must be all http:// or all https://');
  }
  if (!Number.isInteger(leaseTtlMs) || leaseTtlMs < 1_000 || leaseTtlMs > 9_000_000_000_000) {
    throw new InvalidLockArgumentError(
      `etcd backend: leaseTtlMs must be a whole number of milliseconds >= 1000, got ${describe(leaseTtlMs)}`,
    );
  }
  if (typeof requestTimeoutMs !== 'number' || !Number.isFinite(requestTimeoutMs) || requestTimeoutMs <= 0) {
    throw new InvalidLockArgumentError(
      `etcd backend: requestTimeoutMs must be a finite number of milliseconds > 0, got ${describe(requestTimeoutMs)}`,
    );
  }
  return { urls: [...list], leaseTtlSeconds: Math.ceil(leaseTtlMs / 1_000), requestTimeoutMs };
}
