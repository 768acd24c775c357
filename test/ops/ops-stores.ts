import { randomUUID } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { Redis } from 'ioredis';
import type { BackendOptions } from '../../lib/index.js';
import { EtcdServer } from '../harness/etcd-server.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { RedisServer } from '../harness/redis-server.js';
import { ZookeeperServer } from '../harness/zookeeper-server.js';

/** A client of the test's own, handed to the module, which must leave it open. */
export interface UserClient {
  readonly options: BackendOptions;
  /** Resolves if the client still works; rejects if it was closed. */
  works(): Promise<void>;
  close(): Promise<void>;
}

/** One store as the operations tests use it. */
export interface OpsStore {
  readonly name: BackendOptions['type'];
  /** Options with a URL or connection string: the module creates the clients and must close them. */
  options(): BackendOptions;
  /** Options with clients of the test's own, for the backends that take them. */
  userClient?(): UserClient;
}

/** Every store's servers, started at once (each on free 127.0.0.1 ports). */
export class OpsServers {
  redis!: RedisServer;
  masters!: RedisMasters;
  zookeeper!: ZookeeperServer;
  etcd!: EtcdServer;
  postgres!: PostgresServer;
  mariadb!: MariadbServer;
  readonly zkRoot = `/ndl-ops-${randomUUID().slice(0, 8)}`;

  async start(): Promise<void> {
    [this.redis, this.masters, this.zookeeper, this.etcd, this.postgres, this.mariadb] = await Promise.all([
      RedisServer.start(),
      RedisMasters.start(5),
      ZookeeperServer.start(),
      EtcdServer.start(),
      PostgresServer.start(),
      MariadbServer.start(),
    ]);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([
      this.redis?.stop(),
      this.masters?.stop(),
      this.zookeeper?.destroy(),
      this.etcd?.destroy(),
      this.postgres?.destroy(),
      this.mariadb?.destroy(),
    ]);
  }

  /** memory, redis, redlock (5 masters), zookeeper, etcd, postgres, mysql (MariaDB). */
  stores(): OpsStore[] {
    return [
      { name: 'memory', options: () => ({ type: 'memory' }) },
      {
        name: 'redis',
        options: () => ({ type: 'redis', url: this.redis.url }),
        userClient: () => redisClients([this.redis.url], ([client]) => ({ type: 'redis', client })),
      },
      {
        name: 'redlock',
        options: () => ({ type: 'redlock', urls: this.masters.urls }),
        userClient: () => redisClients(this.masters.urls, (clients) => ({ type: 'redlock', clients })),
      },
      {
        name: 'zookeeper',
        options: () => ({ type: 'zookeeper', url: this.zookeeper.connectionString, rootPath: this.zkRoot }),
      },
      { name: 'etcd', options: () => ({ type: 'etcd', urls: this.etcd.url }) },
      {
        name: 'postgres',
        options: () => ({ type: 'postgres', url: this.postgres.connectionString }),
        userClient: () => {
          const pool = new pg.Pool({ connectionString: this.postgres.connectionString, max: 2 });
          return {
            options: { type: 'postgres', client: pool },
            works: async () => void (await pool.query('SELECT 1')),
            close: () => pool.end(),
          };
        },
      },
      {
        name: 'mysql',
        options: () => ({ type: 'mysql', url: this.mariadb.uri }),
        userClient: () => {
          const pool = mysql.createPool({ uri: this.mariadb.uri, connectionLimit: 2 });
          return {
            options: { type: 'mysql', client: pool },
            works: async () => void (await pool.query('SELECT 1')),
            close: () => pool.end(),
          };
        },
      },
    ];
  }
}

function redisClients(urls: string[], options: (clients: Redis[]) => BackendOptions): UserClient {
  const clients = urls.map((url) => new Redis(url, { maxRetriesPerRequest: 1 }));
  return {
    options: options(clients),
    works: async () => void (await Promise.all(clients.map((client) => client.ping()))),
    close: async () => void (await Promise.all(clients.map((client) => client.quit()))),
  };
}
