import type { LockBackend } from '../engine/lock-backend.js';

// Driver types are referenced loosely so that the published .d.ts files never import an optional peer.

/** User and password of a store that authenticates them (etcd, ZooKeeper's digest scheme). Never logged. */
export interface StoreAuth {
  /** The user name. */
  username: string;
  /** The password. */
  password: string;
}

/** One process only: for tests and single-instance apps. */
export interface MemoryBackendOptions {
  type: 'memory';
}

/** The option of the stores that keep something of a key after its last lease: Redis, PostgreSQL, MySQL. */
export interface IdleKeyTtlOption {
  /**
   * How long what the store keeps of a key (Redis: its fence counter and side keys; SQL: its row)
   * stays after the key's last lease ended (released or lapsed): then it expires or a bounded
   * periodic sweep deletes it, so locking ever new keys does not grow the store. A key locked again
   * later gets a larger fence anyway (fences follow the store's clock: see the Footprint section
   * of docs/backends/redis.md and docs/backends/sql.md). Also how far back that clock may step
   * without breaking that. Safe with any lease length. Whole ms from 1. Default 86 400 000 (a day).
   */
  idleKeyTtlMs?: number;
}

/** The clock drift allowance of a store whose leases run on the store's clock (Redis, PostgreSQL, MySQL). */
export interface DriftFactorOption {
  /**
   * Clock drift allowance, as a share of the lease: this process counts a lease as ending
   * `lease x driftFactor + 2 ms` before the store does, so a clock running up to that much slower
   * than the store's never holds past the store's expiry (and the lost signal fires that early). A
   * number in [0, 1). Default 0.01 (100 ms of a 10 s lease), as on Redlock.
   */
  driftFactor?: number;
}

/** A single Redis node, or a Sentinel / Cluster client from ioredis. */
export interface RedisBackendOptions extends IdleKeyTtlOption, DriftFactorOption {
  type: 'redis';
  /** e.g. `redis://:password@127.0.0.1:6379/0` or `rediss://...` for TLS. The module creates and closes the client. */
  url?: string;
  /** An ioredis `Redis` or `Cluster` client of yours; the module leaves it open. */
  client?: unknown;
  /**
   * Counts an acquisition, a renewal and the fences it reserves only once `min` replicas have
   * acknowledged them (Redis `WAIT`, sent to the key's master right after the script), so that a
   * failover to one of those replicas keeps the lock. Not acknowledged within `timeoutMs`: an
   * acquisition is undone and fails with LockBackendError (not as busy); a renewal fails like an
   * unreachable store (the lease lapses unless a later renewal gets through). The lease is counted
   * from before the wait. See docs/backends/redis.md, Replicas and failover. Default: no waiting.
   */
  replicas?: RedisReplicasOptions;
}

/** The `replicas` option of the `redis` backend. */
export interface RedisReplicasOptions {
  /** Replicas that must acknowledge each write: a whole number from 1. */
  min: number;
  /**
   * How long to wait for them, in whole ms from 1 (Redis `WAIT`'s timeout). Meanwhile other
   * commands on the same connection wait too, so keep it short (tens to hundreds of ms).
   */
  timeoutMs: number;
  /**
   * Also require the replicas to have written and fsynced the writes to their append-only file
   * (`WAITAOF 0 min timeoutMs`, Redis 7.2+ with `appendonly yes` on the replicas). Default false.
   */
  aof?: boolean;
}

/** Redlock over N independent Redis masters (not replicas of one another). No fencing tokens. */
export interface RedlockBackendOptions {
  type: 'redlock';
  /** One URL per master, e.g. `redis://10.0.0.1:6379`. The module creates and closes the clients. */
  urls?: string[];
  /** One ioredis `Redis` client per master, yours; the module leaves them open. */
  clients?: unknown[];
  /** Masters that must agree; default floor(N/2)+1. Must be more than N/2. */
  quorum?: number;
  /** Clock drift allowance as a share of the lease; default 0.01 (drift = lease x driftFactor + 2 ms). */
  driftFactor?: number;
  /** How long a round waits for each master before counting it as unavailable. Default leaseMs / 4, clamped to 10..50 ms. */
  nodeTimeoutMs?: number;
  /** Spread of the random back-off after a round that lost votes to another contender. Default 100 ms. */
  retryJitterMs?: number;
}

/** ZooKeeper 3.5+ through node-zookeeper-client: ephemeral sequential lock nodes in one session per backend. */
export interface ZookeeperBackendOptions {
  type: 'zookeeper';
  /**
   * The ensemble's connection string, e.g. `'127.0.0.1:2181'` or `'h1:2181,h2:2181,h3:2181'`,
   * optionally with an existing chroot (`'.../app'`). Required (or its deprecated name).
   */
  url?: string;
  /** @deprecated Use `url` (same value). */
  connectionString?: string;
  /**
   * Requested session timeout (the server clamps it to 2..20 of its ticks). Every lock of the
   * backend lives as long as the session: a crashed holder's locks free this long after it died,
   * and a holder cut off from ZooKeeper for this long loses them. Default 10 000 ms.
   */
  sessionTimeoutMs?: number;
  /** How long a call waits for a connection, and for the server's answer, before failing with LockBackendError. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** Parent znode of all lock nodes. Default `'/nestjs-distributed-lock'`. */
  rootPath?: string;
  /**
   * User and password added to every session the backend opens (ZooKeeper's `digest` scheme).
   * Never logged nor put in error messages. The list form `[{ scheme, credentials }]` is deprecated
   * (it still works, for other schemes too).
   */
  auth?: StoreAuth | { scheme: string; credentials: string }[];
  /**
   * ACL of every node the backend creates (root, per-key parents, lock nodes). `'open'` (default):
   * anyone may do anything (world:anyone). `'creator'`: only the identities in `auth` (needs `auth`).
   * Or a list, e.g. `[{ scheme: 'digest', id: 'app:<base64 sha1 of app:secret>', permissions: ['all'] }]`.
   * Nodes that already exist keep their ACL.
   */
  acl?:
    | 'open'
    | 'creator'
    | { scheme: string; id: string; permissions: ('read' | 'write' | 'create' | 'delete' | 'admin' | 'all')[] }[];
}

/** etcd v3: one lease per backend, kept alive; a lock is the lowest create revision under its key. */
export interface EtcdBackendOptions {
  type: 'etcd';
  /** e.g. `'http://127.0.0.1:2379'`, or every member of the cluster. Required (or its deprecated name). */
  urls?: string | string[];
  /** @deprecated Use `urls` (same value). */
  hosts?: string | string[];
  /**
   * TTL of the one etcd lease all locks of this backend are bound to, kept alive by the client.
   * A crashed holder's locks free within this time. Whole ms from 1 000, rounded up to whole
   * seconds (etcd counts its leases in seconds, and may raise tiny values to its minimum, ~2 s by
   * default). Default 10 000.
   */
  leaseTtlMs?: number;
  /** @deprecated Use `leaseTtlMs` (in milliseconds: `leaseTtlSeconds * 1000`). */
  leaseTtlSeconds?: number;
  /** Deadline of each etcd request, so a hung server reads as unreachable. Default 5000. */
  requestTimeoutMs?: number;
  /** etcd user and password (`etcdctl user add`, `auth enable`), passed to etcd3 as `auth`. Never logged. */
  auth?: StoreAuth;
  /**
   * TLS for `https://` hosts, passed to etcd3 as `credentials`: the CA of etcd's certificate
   * (`rootCertificate`; default: the system's roots) and, for client-certificate auth, the
   * client's `privateKey` and `certChain`. PEM, as a string or Buffer.
   */
  credentials?: { rootCertificate?: string | Buffer; privateKey?: string | Buffer; certChain?: string | Buffer };
}

/** PostgreSQL: a lease table (created on first use) in your database. */
export interface PostgresBackendOptions extends IdleKeyTtlOption, DriftFactorOption {
  type: 'postgres';
  /** e.g. `postgres://user:password@host:5432/db`. The module creates and closes a pool. */
  url?: string;
  /** A `pg` Pool of yours; the module leaves it open. */
  client?: unknown;
  /** @deprecated Use `url` (same value). */
  connectionString?: string;
  /** @deprecated Use `client` (same value). */
  pool?: unknown;
  /** Lease table name. Default `'distributed_locks'`. */
  table?: string;
}

/** MySQL 8 or MariaDB (tested: 10.11): a lease table (created on first use) in your database. */
export interface MysqlBackendOptions extends IdleKeyTtlOption, DriftFactorOption {
  type: 'mysql';
  /** e.g. `mysql://user:password@host:3306/db`. The module creates and closes a pool. */
  url?: string;
  /** A `mysql2` Pool of yours (promise or callback style); the module leaves it open. */
  client?: unknown;
  /** @deprecated Use `url` (same value). */
  uri?: string;
  /** @deprecated Use `client` (same value). */
  pool?: unknown;
  /** Lease table name. Default `'distributed_locks'`. */
  table?: string;
}

/** The built-in stores, told apart by `type`. */
export type BackendOptions =
  | MemoryBackendOptions
  | RedisBackendOptions
  | RedlockBackendOptions
  | ZookeeperBackendOptions
  | EtcdBackendOptions
  | PostgresBackendOptions
  | MysqlBackendOptions;

/** The `type` of a built-in store: `'memory'`, `'redis'`, `'redlock'`, `'zookeeper'`, `'etcd'`, `'postgres'` or `'mysql'`. */
export type BackendType = BackendOptions['type'];

/** A backend option: one of the built-in stores, or your own object implementing `LockBackend`. */
export type BackendConfig = BackendOptions | LockBackend;
