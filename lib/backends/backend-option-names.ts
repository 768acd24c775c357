import type { BackendOptions, BackendType } from './backend-options.js';
import { deprecatedOptionNames } from './deprecated-options.js';

/** Every field of each backend's options, listed once; the type makes the compiler keep the lists in step with the interfaces. */
const FIELDS: { readonly [Type in BackendType]: Record<keyof Extract<BackendOptions, { type: Type }>, true> } = {
  memory: { type: true },
  redis: { type: true, url: true, client: true, idleKeyTtlMs: true, replicas: true, driftFactor: true },
  redlock: {
    type: true,
    urls: true,
    clients: true,
    quorum: true,
    driftFactor: true,
    nodeTimeoutMs: true,
    retryJitterMs: true,
  },
  zookeeper: {
    type: true,
    url: true,
    connectionString: true,
    sessionTimeoutMs: true,
    connectTimeoutMs: true,
    rootPath: true,
    auth: true,
    acl: true,
  },
  etcd: {
    type: true,
    urls: true,
    hosts: true,
    leaseTtlMs: true,
    leaseTtlSeconds: true,
    requestTimeoutMs: true,
    auth: true,
    credentials: true,
  },
  postgres: {
    type: true,
    url: true,
    client: true,
    connectionString: true,
    pool: true,
    table: true,
    idleKeyTtlMs: true,
    driftFactor: true,
  },
  mysql: {
    type: true,
    url: true,
    client: true,
    uri: true,
    pool: true,
    table: true,
    idleKeyTtlMs: true,
    driftFactor: true,
  },
};

/** @internal The option names the backend of `type` accepts and advertises (not the deprecated ones, which `createLockBackend` renames first). */
export function backendOptionNames(type: BackendType): readonly string[] {
  const deprecated = deprecatedOptionNames(type);
  return Object.keys(FIELDS[type]).filter((name) => !deprecated.includes(name));
}
