import type { LockBackend } from '../../lib/engine/lock-backend.js';
import type { RedisBackend } from '../../lib/backends/redis/redis-backend.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import type { PubSubKind } from '../../lib/backends/redis/sharded-pubsub.js';

// Tests reach the library's internals here, through seams that ship nothing of their own: registered
// symbols the library reads (sharded-pubsub.ts, zookeeper-options.ts) and private members read by
// name (TypeScript checks the names, so a rename fails the typecheck instead of the test going quiet).

/** Makes a Cluster `client` announce releases with `kind`, whatever its servers support. Before its backend is built. */
export function forcePubSubKind(client: object, kind: PubSubKind): void {
  (client as Record<symbol, unknown>)[Symbol.for('nestjs-distributed-lock.pub-sub-kind')] = kind;
}

/** How many claims of a redis `backend` sleep until `storeKey` is released. */
export function asleepOn(backend: LockBackend, storeKey: string): number {
  const channel = (backend as RedisBackend)['listener']['channels'].get(redisLockKeys(storeKey).channel);
  return channel === undefined ? 0 : channel['waiters'].filter((waiter) => waiter.isAsleep).length;
}

/** Zookeeper backend options whose empty parent nodes are deleted `ms` after a release (1 s by default). */
export function withParentCleanupDelay<Options extends object>(options: Options, ms: number): Options {
  return { ...options, [Symbol.for('nestjs-distributed-lock.zookeeper.parent-cleanup-delay-ms')]: ms };
}
