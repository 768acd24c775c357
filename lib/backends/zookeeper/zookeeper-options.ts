import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';
import type { ZookeeperBackendOptions } from '../backend-options.js';

export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_ROOT_PATH = '/nestjs-distributed-lock';
/** How long a released key's parent node stays, in case the key is locked again soon. */
export const DEFAULT_PARENT_CLEANUP_DELAY_MS = 1_000;

export interface ResolvedZookeeperOptions {
  readonly connectionString: string;
  readonly sessionTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly rootPath: string;
  readonly parentCleanupDelayMs: number;
}

/** Characters ZooKeeper refuses in a node name (PathUtils.validatePath). */
// eslint-disable-next-line no-control-regex
const FORBIDDEN_PATH_CHARS = /[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/;
const HOST_LIST = /^[^\s,/]+(,[^\s,/]+)*(\/.*)?$/;

/** Validates the `zookeeper` backend options and fills in the defaults. Throws InvalidLockArgumentError. */
export function resolveZookeeperOptions(options: ZookeeperBackendOptions): ResolvedZookeeperOptions {
  const { connectionString, sessionTimeoutMs, connectTimeoutMs, rootPath } = options;
  // Not public: tests set 0 to make releases race acquirers on parent clean-up.
  const { parentCleanupDelayMs } = options as { parentCleanupDelayMs?: number };
  if (typeof connectionString !== 'string' || !HOST_LIST.test(connectionString)) {
    throw new InvalidLockArgumentError(`zookeeper connectionString must look like 'host:2181' or 'h1:2181,h2:2181/chroot', got ${describe(connectionString)}`);
  }
  const chroot = connectionString.includes('/') ? connectionString.slice(connectionString.indexOf('/')) : undefined;
  if (chroot !== undefined && chroot !== '/') checkPath(chroot, 'the chroot in connectionString');
  return {
    connectionString,
    sessionTimeoutMs: checkMs(sessionTimeoutMs, 'sessionTimeoutMs', DEFAULT_SESSION_TIMEOUT_MS),
    connectTimeoutMs: checkMs(connectTimeoutMs, 'connectTimeoutMs', DEFAULT_CONNECT_TIMEOUT_MS),
    rootPath: rootPath === undefined ? DEFAULT_ROOT_PATH : checkPath(rootPath, 'rootPath'),
    parentCleanupDelayMs: parentCleanupDelayMs === 0 ? 0 : checkMs(parentCleanupDelayMs, 'parentCleanupDelayMs', DEFAULT_PARENT_CLEANUP_DELAY_MS),
  };
}

function checkMs(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2_147_483_647) {
    throw new InvalidLockArgumentError(`zookeeper ${what} must be a whole number of milliseconds >= 1, got ${describe(value)}`);
  }
  return value;
}

/** An absolute znode path other than `/`: no empty, `.` or `..` segments, no trailing slash, no forbidden characters. */
function checkPath(value: unknown, what: string): string {
  const valid =
    typeof value === 'string' &&
    value.startsWith('/') &&
    value.length > 1 &&
    !FORBIDDEN_PATH_CHARS.test(value) &&
    value
      .slice(1)
      .split('/')
      .every((segment) => segment !== '' && segment !== '.' && segment !== '..');
  if (!valid || value === '/zookeeper' || value.startsWith('/zookeeper/')) {
    throw new InvalidLockArgumentError(`zookeeper ${what} must be an absolute znode path such as '/locks' (not '/', not under /zookeeper), got ${describe(value)}`);
  }
  return value;
}
