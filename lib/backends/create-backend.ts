import { InvalidLockArgumentError } from '../errors.js';
import { checkKnownFields } from '../util/known-fields.js';
import { describe } from '../engine/lock-options.js';
import { backendOptionNames } from './backend-option-names.js';
import type { BackendConfig, BackendType } from './backend-options.js';
import { renameDeprecatedOptions } from './deprecated-options.js';
import type { LockBackend } from '../engine/lock-backend.js';
import { MemoryBackend } from './memory/memory-backend.js';

type Factory = (options: never) => Promise<LockBackend>;

/** Each store's module is imported only when configured, so its driver stays an optional peer. */
const factories: Record<BackendType, Factory> = {
  memory: async () => new MemoryBackend(),
  redis: async (options) => (await import('./redis/redis-backend.js')).createRedisBackend(options),
  redlock: async (options) => (await import('./redlock/redlock-backend.js')).createRedlockBackend(options),
  zookeeper: async (options) => (await import('./zookeeper/zookeeper-backend.js')).createZookeeperBackend(options),
  etcd: async (options) => (await import('./etcd/etcd-backend.js')).createEtcdBackend(options),
  postgres: async (options) => (await import('./sql/postgres-backend.js')).createPostgresBackend(options),
  mysql: async (options) => (await import('./sql/mysql-backend.js')).createMysqlBackend(options),
};

export function isLockBackend(value: unknown): value is LockBackend {
  const candidate = value as Partial<LockBackend> | null;
  return (
    typeof candidate?.claim === 'function' &&
    typeof candidate.close === 'function' &&
    typeof candidate.name === 'string'
  );
}

/**
 * Validates the `backend` option and builds the backend. A custom object implementing
 * `LockBackend` is used as it is. Throws InvalidLockArgumentError on bad options.
 */
export async function createLockBackend(config: BackendConfig): Promise<LockBackend> {
  if (isLockBackend(config)) return config;
  if (typeof config !== 'object' || config === null) {
    throw new InvalidLockArgumentError(
      `backend must be an object with a "type" (one of ${Object.keys(factories).join(', ')}) or a LockBackend, got ${describe(config)}`,
    );
  }
  const factory = factories[config.type];
  if (!factory || !Object.hasOwn(factories, config.type)) {
    throw new InvalidLockArgumentError(
      `Unknown backend type ${describe((config as { type: unknown }).type)}; expected one of ${Object.keys(factories).join(', ')}`,
    );
  }
  const options = renameDeprecatedOptions(config);
  checkKnownFields(options, backendOptionNames(options.type), `${options.type} backend`);
  return factory(options as never);
}
