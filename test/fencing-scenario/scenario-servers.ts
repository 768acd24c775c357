import { randomUUID } from 'node:crypto';
import type { BackendOptions } from '../../lib/index.js';
import * as lib from '../../lib/index.js';
import { EtcdServer } from '../harness/etcd-server.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisServer } from '../harness/redis-server.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { prepareGuardedResource, type ResourceAddress } from './guarded-resource-client.mjs';

export type ServerName = 'postgres' | 'mariadb' | 'redis' | 'zookeeper' | 'etcd';
/** A store that hands out fences and runs in its own server (memory is the other one). */
export type ServerStore = 'redis' | 'zookeeper' | 'etcd' | 'postgres' | 'mysql';

/** Holder A's lease: the engine renews it every lease/3, so a SIGSTOP past it loses the lock. */
export const LEASE_MS = 1_000;
/** ZooKeeper's session (tickTime 500 ms allows 1..10 s) and etcd's lease TTL (2 s: etcd's minimum with default timings). */
const ZOOKEEPER_SESSION_MS = 1_500;
const ETCD_LEASE_TTL_SECONDS = 2;

/**
 * The servers of one test file, each started once and shared by every store x resource pair in it:
 * a lock store may also be a resource (the lock table next to the data, as many apps have it).
 */
export class ScenarioServers {
  private readonly zkRoot = `/ndl-fence-${randomUUID().slice(0, 8)}`;

  private constructor(
    private readonly postgres?: PostgresServer,
    private readonly mariadb?: MariadbServer,
    private readonly redis?: RedisServer,
    private readonly zookeeper?: ZookeeperServer,
    private readonly etcd?: EtcdServer,
  ) {}

  static async start(names: readonly ServerName[]): Promise<ScenarioServers> {
    const want = <T>(name: ServerName, start: () => Promise<T>) =>
      names.includes(name) ? start() : Promise.resolve(undefined);
    const started = await Promise.allSettled([
      want('postgres', () => PostgresServer.start()),
      want('mariadb', () => MariadbServer.start()),
      want('redis', () => RedisServer.start()),
      want('zookeeper', () => ZookeeperServer.start()),
      want('etcd', () => EtcdServer.start()),
    ]);
    const [postgres, mariadb, redis, zookeeper, etcd] = started.map((result) =>
      result.status === 'fulfilled' ? result.value : undefined,
    );
    const servers = new ScenarioServers(
      postgres as PostgresServer,
      mariadb as MariadbServer,
      redis as RedisServer,
      zookeeper as ZookeeperServer,
      etcd as EtcdServer,
    );
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) {
      await servers.stop();
      throw failed.reason;
    }
    for (const address of servers.resources()) await prepareGuardedResource(address, lib);
    return servers;
  }

  /** The resources among the started servers, named as the tests print them. */
  resources(): (ResourceAddress & { readonly label: string })[] {
    return [
      ...(this.postgres
        ? [{ label: 'PostgreSQL', kind: 'postgres' as const, url: this.postgres.connectionString }]
        : []),
      ...(this.mariadb ? [{ label: 'MariaDB', kind: 'mysql' as const, url: this.mariadb.uri }] : []),
      ...(this.redis ? [{ label: 'Redis', kind: 'redis' as const, url: this.redis.url }] : []),
    ];
  }

  /** Backend options of a lock store, with a short session or lease TTL where the store's liveness is one. */
  storeOptions(store: ServerStore): BackendOptions {
    switch (store) {
      case 'redis':
        return { type: 'redis', url: this.redis!.url };
      case 'zookeeper':
        return {
          type: 'zookeeper',
          url: this.zookeeper!.connectionString,
          sessionTimeoutMs: ZOOKEEPER_SESSION_MS,
          connectTimeoutMs: 2_000,
          rootPath: this.zkRoot,
        };
      case 'etcd':
        return {
          type: 'etcd',
          urls: this.etcd!.url,
          leaseTtlMs: ETCD_LEASE_TTL_SECONDS * 1_000,
          requestTimeoutMs: 1_500,
        };
      case 'postgres':
        return { type: 'postgres', url: this.postgres!.connectionString };
      case 'mysql':
        return { type: 'mysql', url: this.mariadb!.uri };
    }
  }

  async stop(): Promise<void> {
    await Promise.allSettled([
      this.postgres?.destroy(),
      this.mariadb?.destroy(),
      this.redis?.stop(),
      this.zookeeper?.destroy(),
      this.etcd?.destroy(),
    ]);
  }
}
