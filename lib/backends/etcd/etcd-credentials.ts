import { InvalidLockArgumentError } from '../../errors.js';
import { describe } from '../../engine/lock-options.js';
import type { EtcdBackendOptions } from '../backend-options.js';

/** What the etcd3 client takes for password auth and TLS (its `auth` and `credentials` options). */
interface EtcdClientCredentials {
  auth?: { username: string; password: string };
  credentials?: { rootCertificate?: Buffer; privateKey?: Buffer; certChain?: Buffer };
}

/**
 * Validates `auth` and `credentials` (InvalidLockArgumentError, never quoting a password or a key)
 * and returns them as the etcd3 client takes them. PEM strings become Buffers. Without
 * `rootCertificate`, `https://` hosts are checked against the system's CA roots.
 */
export function resolveEtcdCredentials(options: EtcdBackendOptions, hosts: readonly string[]): EtcdClientCredentials {
  const resolved: EtcdClientCredentials = {};
  const { auth, credentials } = options;
  if (auth !== undefined) {
    const { username, password } = (auth ?? {}) as { username?: unknown; password?: unknown };
    if (
      typeof auth !== 'object' ||
      auth === null ||
      typeof username !== 'string' ||
      username === '' ||
      typeof password !== 'string'
    ) {
      throw new InvalidLockArgumentError(
        'etcd backend: auth must be { username, password } with a non-empty username string and a password string',
      );
    }
    resolved.auth = { username, password };
  }
  if (credentials !== undefined) {
    if (typeof credentials !== 'object' || credentials === null) {
      throw new InvalidLockArgumentError(
        `etcd backend: credentials must be { rootCertificate, privateKey?, certChain? }, got ${describe(credentials)}`,
      );
    }
    if (!hosts.every((host) => host.startsWith('https:'))) {
      throw new InvalidLockArgumentError('etcd backend: credentials (TLS) need https:// urls');
    }
    const rootCertificate =
      credentials.rootCertificate === undefined ? undefined : pem(credentials.rootCertificate, 'rootCertificate');
    const privateKey = credentials.privateKey === undefined ? undefined : pem(credentials.privateKey, 'privateKey');
    const certChain = credentials.certChain === undefined ? undefined : pem(credentials.certChain, 'certChain');
    if ((privateKey === undefined) !== (certChain === undefined)) {
      throw new InvalidLockArgumentError(
        'etcd backend: a client certificate needs both credentials.privateKey and credentials.certChain',
      );
    }
    if (rootCertificate === undefined && privateKey === undefined) {
      throw new InvalidLockArgumentError(
        'etcd backend: credentials needs rootCertificate, or privateKey and certChain, or all three',
      );
    }
    resolved.credentials = {
      ...(rootCertificate && { rootCertificate }),
      ...(privateKey && certChain && { privateKey, certChain }),
    };
  }
  return resolved;
}

function pem(value: unknown, name: string): Buffer {
  if (Buffer.isBuffer(value) && value.length > 0) return value;
  if (typeof value === 'string' && value.trim() !== '') return Buffer.from(value);
  throw new InvalidLockArgumentError(
    `etcd backend: credentials.${name} must be PEM text (a non-empty string or Buffer)`,
  );
}
