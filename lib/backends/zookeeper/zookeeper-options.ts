import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';
import type { ZookeeperBackendOptions } from '../backend-options.js';
import { warnDeprecatedOnce } from '../deprecated-options.js';

const DEFAULT_SESSION_TIMEOUT_MS = 10_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_ROOT_PATH = '/nestjs-distributed-lock';
/** How long a released key's parent node stays, in case the key is locked again soon. */
const DEFAULT_PARENT_CLEANUP_DELAY_MS = 1_000;

const ZOOKEEPER_PERMISSIONS = ['read', 'write', 'create', 'delete', 'admin', 'all'] as const;
export type ZookeeperPermission = (typeof ZOOKEEPER_PERMISSIONS)[number];

/** One `auth` entry; `credentials` is not enumerable, so that logging or serialising the options never shows it. */
interface ZookeeperAuth {
  readonly scheme: string;
  readonly credentials: Buffer;
}

/** `'open'` (world:anyone, all), `'creator'` (the session's authenticated ids, all), or explicit entries. */
export type ZookeeperAcl =
  | 'open'
  | 'creator'
  | readonly { readonly scheme: string; readonly id: string; readonly permissions: readonly ZookeeperPermission[] }[];

export interface ResolvedZookeeperOptions {
  readonly connectionString: string;
  readonly sessionTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly rootPath: string;
  readonly parentCleanupDelayMs: number;
  readonly auth: readonly ZookeeperAuth[];
  readonly acl: ZookeeperAcl;
}

/** Characters ZooKeeper refuses in a node name (PathUtils.validatePath). */
// eslint-disable-next-line no-control-regex
const FORBIDDEN_PATH_CHARS = /[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/;
const HOST_LIST = /^[^\s,/]+(,[^\s,/]+)*(\/.*)?$/;

/**
 * @internal Options may carry, under this registered symbol, how long an empty parent node is kept
 * after a release: the library's own tests set 0 to make releases race acquirers on parent clean-up.
 */
const PARENT_CLEANUP_DELAY_MS = Symbol.for('nestjs-distributed-lock.zookeeper.parent-cleanup-delay-ms');

/** Validates the `zookeeper` backend options and fills in the defaults. Throws InvalidLockArgumentError. */
export function resolveZookeeperOptions(options: ZookeeperBackendOptions): ResolvedZookeeperOptions {
  const { url: connectionString, sessionTimeoutMs, connectTimeoutMs, rootPath, auth, acl } = options;
  const parentCleanupDelayMs = (options as { [PARENT_CLEANUP_DELAY_MS]?: number })[PARENT_CLEANUP_DELAY_MS];
  if (typeof connectionString !== 'string' || !HOST_LIST.test(connectionString)) {
    throw new InvalidLockArgumentError(
      `zookeeper url must look like 'host:2181' or 'h1:2181,h2:2181/chroot', got ${describe(connectionString)}`,
    );
  }
  const chroot = connectionString.includes('/') ? connectionString.slice(connectionString.indexOf('/')) : undefined;
  if (chroot !== undefined && chroot !== '/') checkPath(chroot, 'the chroot in url');
  const resolvedAuth = checkAuth(auth);
  return {
    connectionString,
    sessionTimeoutMs: checkMs(sessionTimeoutMs, 'sessionTimeoutMs', DEFAULT_SESSION_TIMEOUT_MS),
    connectTimeoutMs: checkMs(connectTimeoutMs, 'connectTimeoutMs', DEFAULT_CONNECT_TIMEOUT_MS),
    rootPath: rootPath === undefined ? DEFAULT_ROOT_PATH : checkPath(rootPath, 'rootPath'),
    parentCleanupDelayMs:
      parentCleanupDelayMs === 0
        ? 0
        : checkMs(parentCleanupDelayMs, 'parentCleanupDelayMs', DEFAULT_PARENT_CLEANUP_DELAY_MS),
    auth: resolvedAuth,
    acl: checkAcl(acl, resolvedAuth.length > 0),
  };
}

function checkMs(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2_147_483_647) {
    throw new InvalidLockArgumentError(
      `zookeeper ${what} must be a whole number of milliseconds >= 1, got ${describe(value)}`,
    );
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
    throw new InvalidLockArgumentError(
      `zookeeper ${what} must be an absolute znode path such as '/locks' (not '/', not under /zookeeper), got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * Validates `auth` without ever quoting a credential: `{ username, password }` (the digest scheme),
 * or the deprecated list of `{ scheme, credentials }`.
 */
function checkAuth(value: unknown): readonly ZookeeperAuth[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    const { username, password } = (value ?? {}) as { username?: unknown; password?: unknown };
    if (
      typeof value !== 'object' ||
      value === null ||
      typeof username !== 'string' ||
      username === '' ||
      username.includes(':') ||
      typeof password !== 'string'
    ) {
      throw new InvalidLockArgumentError(
        `zookeeper auth must be { username, password } with a non-empty username string (no ':') and a password string, got ${kind(value)}`,
      );
    }
    return checkAuthList([{ scheme: 'digest', credentials: `${username}:${password}` }]);
  }
  warnDeprecatedOnce(
    'NDL_DEP_ZOOKEEPER_AUTH_LIST',
    'zookeeper backend option "auth" as a list of { scheme, credentials } is deprecated: use auth: { username, password } (the digest scheme)',
  );
  return checkAuthList(value);
}

function checkAuthList(value: unknown[]): readonly ZookeeperAuth[] {
  return value.map((entry: unknown, i) => {
    const { scheme, credentials } = (entry ?? {}) as { scheme?: unknown; credentials?: unknown };
    const what = `zookeeper auth[${i}]`;
    if (typeof entry !== 'object' || entry === null)
      throw new InvalidLockArgumentError(`${what} must be { scheme, credentials }, got ${kind(entry)}`);
    checkScheme(scheme, `${what}.scheme`);
    if (scheme === 'world' || scheme === 'auth')
      throw new InvalidLockArgumentError(
        `${what}.scheme '${scheme}' is an ACL scheme, not an authentication scheme (use e.g. 'digest')`,
      );
    if (typeof credentials !== 'string' || credentials === '')
      throw new InvalidLockArgumentError(`${what}.credentials must be a non-empty string, got ${kind(credentials)}`);
    if (scheme === 'digest' && !/^[^:]+:/.test(credentials))
      throw new InvalidLockArgumentError(
        `${what}.credentials must be 'user:password' for the digest scheme (value not shown)`,
      );
    const resolved = { scheme } as ZookeeperAuth;
    return Object.defineProperty(resolved, 'credentials', {
      value: Buffer.from(credentials, 'utf8'),
      enumerable: false,
    });
  });
}

/** ZooKeeper's digest id: `user:base64(sha1(user:password))`. */
const DIGEST_ID = /^[^:]+:[A-Za-z0-9+/]{27}=$/;

function checkAcl(value: unknown, hasAuth: boolean): ZookeeperAcl {
  if (value === undefined || value === 'open') return 'open';
  const needsAuth = (what: string) =>
    new InvalidLockArgumentError(
      `zookeeper ${what} grants the session's authenticated ids, so it needs the auth option (e.g. { username, password })`,
    );
  if (value === 'creator') {
    if (!hasAuth) throw needsAuth(`acl 'creator'`);
    return 'creator';
  }
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidLockArgumentError(
      `zookeeper acl must be 'open', 'creator' or a non-empty array of { scheme, id, permissions }, got ${describe(value)}`,
    );
  }
  const entries = value.map((entry: unknown, i) => {
    const what = `zookeeper acl[${i}]`;
    if (typeof entry !== 'object' || entry === null)
      throw new InvalidLockArgumentError(`${what} must be { scheme, id, permissions }, got ${kind(entry)}`);
    const { scheme, id, permissions } = entry as { scheme?: unknown; id?: unknown; permissions?: unknown };
    checkScheme(scheme, `${what}.scheme`);
    if (typeof id !== 'string') throw new InvalidLockArgumentError(`${what}.id must be a string, got ${kind(id)}`);
    if (scheme === 'world' && id !== 'anyone')
      throw new InvalidLockArgumentError(`${what}: the world scheme has the one id 'anyone'`);
    if (scheme === 'auth' && !hasAuth) throw needsAuth(`${what} (scheme 'auth')`);
    if (scheme === 'digest' && !DIGEST_ID.test(id)) {
      throw new InvalidLockArgumentError(
        `${what}.id must be 'user:' + base64(sha1('user:password')) for the digest scheme, not the password itself (value not shown); acl 'creator' with auth computes it for you`,
      );
    }
    if (scheme !== 'auth' && id === '') throw new InvalidLockArgumentError(`${what}.id must not be empty`);
    if (!Array.isArray(permissions) || permissions.length === 0)
      throw new InvalidLockArgumentError(
        `${what}.permissions must be a non-empty array of ${ZOOKEEPER_PERMISSIONS.join(', ')}`,
      );
    for (const permission of permissions) {
      if (!ZOOKEEPER_PERMISSIONS.includes(permission as ZookeeperPermission)) {
        throw new InvalidLockArgumentError(
          `${what}.permissions: unknown permission ${describe(permission)}; expected ${ZOOKEEPER_PERMISSIONS.join(', ')}`,
        );
      }
    }
    return { scheme: scheme as string, id, permissions: [...(permissions as ZookeeperPermission[])] };
  });
  // Someone must be able to queue (create), read the queue and leave it (delete), or no lock can ever be taken.
  const granted = new Set(entries.flatMap((entry) => entry.permissions));
  const missing = granted.has('all')
    ? []
    : (['read', 'create', 'delete'] as const).filter((permission) => !granted.has(permission));
  if (missing.length > 0)
    throw new InvalidLockArgumentError(
      `zookeeper acl grants nobody ${missing.join(', ')}: the backend needs read, create and delete on its nodes`,
    );
  return entries;
}

function checkScheme(value: unknown, what: string): void {
  if (typeof value !== 'string' || !/^[\x21-\x7e]+$/.test(value))
    throw new InvalidLockArgumentError(
      `${what} must be a non-empty scheme name such as 'digest', got ${describe(value)}`,
    );
}

/** The type of a value, never its content (it may be a secret). */
function kind(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
