import { randomUUID } from 'node:crypto';
import { EtcdCluster } from '../harness/etcd-cluster.js';
import { EtcdServer } from '../harness/etcd-server.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { RedisServer } from '../harness/redis-server.js';
import { ZOOKEEPER_TICK_MS, ZookeeperEnsemble, ZookeeperServer } from '../harness/zookeeper-server.js';
import type { NemesisStore } from './nemesis-runner.js';
import { now } from './nemesis-time.js';
import { isolatePorts } from './port-isolation.js';
import { clusterStore, sentinelStore } from './redis-topologies.js';
import { sqlServerClock, withFastClock } from './store-clock.js';

/** A store's servers, started; `stop` ends them and deletes their data. */
export interface StartedStore extends NemesisStore {
  stop(): Promise<void>;
}

/** The proxies of `start`'s store add `latencyMs` each way: a store on another machine. */
async function withLatency(name: string, latencyMs: number, start: () => Promise<StartedStore>): Promise<StartedStore> {
  return { ...(await start()), name, latencyMs };
}

/** etcd's default election timeout (1 s), which a follower waits out randomised up to twice before it stands. */
const ETCD_ELECTION_MS = 2 * 1_000;

/** The stores the nemesis runs, by name: each starts its own servers. */
export const NEMESIS_STORES: Record<string, () => Promise<StartedStore>> = {
  /** One redis-server without persistence: a restart loses the lock key and the fence counter. */
  async redis() {
    const server = await RedisServer.start();
    return {
      name: 'redis',
      endpoints: [server.port],
      leaseMs: 1_000,
      lossMs: 1_300,
      clientConfig: ([port]) => ({ type: 'redis', url: `redis://127.0.0.1:${port}` }),
      restart: () => server.restart(),
      stop: () => server.stop(),
    };
  },
  /** PostgreSQL 15; a restart is a fast shutdown and start on the same data. */
  async postgres() {
    const server = await PostgresServer.start();
    const clock = sqlServerClock('postgres', server.connectionString);
    return {
      name: 'postgres',
      endpoints: [server.port],
      leaseMs: 1_000,
      lossMs: 1_300,
      sqlResource: { dialect: 'postgres', url: server.connectionString },
      clientConfig: ([port]) => ({
        type: 'postgres',
        connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
      }),
      restart: () => server.restart(),
      stop: async () => (await clock.close(), await server.destroy()),
      serverClockMs: clock.read,
    };
  },
  /** MariaDB; a restart is a clean shutdown and start on the same data. */
  async mysql() {
    const server = await MariadbServer.start();
    const clock = sqlServerClock('mysql', server.uri);
    return {
      name: 'mysql',
      endpoints: [server.port],
      leaseMs: 1_000,
      lossMs: 1_300,
      sqlResource: { dialect: 'mysql', url: server.uri },
      clientConfig: ([port]) => ({ type: 'mysql', uri: server.uri.replace(`:${server.port}/`, `:${port}/`) }),
      restart: () => server.restart(),
      stop: async () => (await clock.close(), await server.destroy()),
      serverClockMs: clock.read,
    };
  },
  /** Redlock over 5 masters without persistence (no fences: the clients write the canary only); a restart restarts one master, which comes back empty. */
  async redlock() {
    const masters = await RedisMasters.start(5);
    return {
      name: 'redlock',
      endpoints: masters.servers.map((server) => server.port),
      leaseMs: 1_000,
      lossMs: 1_300,
      fenced: false,
      clientConfig: (ports) => ({ type: 'redlock', urls: ports.map((port) => `redis://127.0.0.1:${port}`) }),
      restart: () => masters.restart(0),
      stop: () => masters.stop(),
    };
  },
  /** One etcd member, 2 s leases (its minimum); a restart keeps the data dir. */
  async etcd() {
    const server = await EtcdServer.start();
    return {
      name: 'etcd',
      endpoints: [server.clientPort],
      leaseMs: 1_000,
      lossMs: 2_000 + 1_300,
      clientConfig: ([port]) => ({
        type: 'etcd',
        hosts: `http://127.0.0.1:${port}`,
        leaseTtlSeconds: 2,
        requestTimeoutMs: 1_500,
      }),
      restart: () => server.restart(),
      stop: () => server.destroy(),
    };
  },
  /** One standalone ZooKeeper (tick 500 ms), 1.5 s sessions; a restart is a SIGKILL and start on the same data. */
  async zookeeper() {
    const server = await ZookeeperServer.start();
    const rootPath = `/ndl-nemesis-${randomUUID().slice(0, 8)}`;
    return {
      name: 'zookeeper',
      endpoints: [server.port],
      leaseMs: 1_000,
      lossMs: 1_500 + 2 * ZOOKEEPER_TICK_MS + 600,
      clientConfig: ([port]) => ({
        type: 'zookeeper',
        connectionString: `127.0.0.1:${port}`,
        sessionTimeoutMs: 1_500,
        connectTimeoutMs: 2_000,
        rootPath,
      }),
      restart: () => server.restart(),
      stop: () => server.destroy(),
      // Its uptime, on the JVM's monotonic clock (System.nanoTime), which runs its session expiry.
      serverClockMs: async () => Number(/zk_uptime\s+(\d+)/.exec(await server.fourLetter('mntr'))?.[1]),
    };
  },
  /** Redis Sentinel (1 master, 2 replicas, 3 Sentinels): asynchronous replication, as most deployments run it. */
  'redis-sentinel': () => sentinelStore('redis-sentinel'),
  /** The same with the backend's `replicas: { min: 1, timeoutMs: 200 }`: a lock counts once a replica acknowledged it. */
  'redis-sentinel-acked': () => sentinelStore('redis-sentinel-acked', { min: 1, timeoutMs: 200 }),
  /** Redis Cluster, 3 masters with a replica each. */
  'redis-cluster': () => clusterStore('redis-cluster'),
  /** The same with `replicas: { min: 1, timeoutMs: 200 }`. */
  'redis-cluster-acked': () => clusterStore('redis-cluster-acked', { min: 1, timeoutMs: 200 }),
  /** PostgreSQL and MariaDB 20 ms away each way (their proxies add it): the lost signal's margin must not shrink with the round trip. */
  'postgres-20ms': () => withLatency('postgres-20ms', 20, NEMESIS_STORES.postgres),
  'mysql-20ms': () => withLatency('mysql-20ms', 20, NEMESIS_STORES.mysql),
  /** The servers' clocks run 1 % fast (libfaketime): PostgreSQL, MariaDB, ZooKeeper. Not redis-server 7.0 (it does not start under libfaketime 0.9.10) nor etcd (Go reads the clock without the C library). */
  'postgres-clock-fast': () => withFastClock('postgres-clock-fast', NEMESIS_STORES.postgres),
  'mysql-clock-fast': () => withFastClock('mysql-clock-fast', NEMESIS_STORES.mysql),
  'zookeeper-clock-fast': () => withFastClock('zookeeper-clock-fast', NEMESIS_STORES.zookeeper),
  /** 3 etcd members; the leader, or the member the clients use, is isolated (from peers and clients: every packet to or from its ports, and its own connections to its peers) for 8 s. Clients are given every member. */
  async 'etcd-3'() {
    const cluster = await EtcdCluster.start(3);
    return {
      name: 'etcd-3',
      endpoints: cluster.members.map((m) => m.clientPort),
      leaseMs: 1_000,
      lossMs: 2_000 + 1_300,
      isolationMs: 8_000,
      // A holder whose member lost the quorum moves to another member and finishes its release there: the key is free after one election and one lease TTL at most.
      unavailableBound: { ms: ETCD_ELECTION_MS + 2_000, why: 'one election + one lease TTL' },
      clientConfig: (ports) => ({
        type: 'etcd',
        hosts: ports.map((port) => `http://127.0.0.1:${port}`),
        leaseTtlSeconds: 2,
        requestTimeoutMs: 1_500,
      }),
      async isolateMember(which) {
        // Each round starts from a cluster whose members all follow one leader and have caught up (the previous round's isolated member included).
        await cluster.settled();
        const member = which === 'leader' ? await cluster.leader() : cluster.members[which];
        return {
          member: member.memberName,
          heal: isolatePorts([member.clientPort, member.peerPort], { peersOnly: false, pid: member.pid! }),
        };
      },
      restart: () => Promise.reject(new Error('etcd-3: no restart fault')),
      stop: () => cluster.destroy(),
    };
  },
  /** A 3-member ZooKeeper ensemble; the leader, or the member the clients use, is isolated (from peers and clients: every packet to or from its ports, and its own connections to its peers) for 8 s. Clients are given every member. */
  async 'zookeeper-3'() {
    const ensemble = await ZookeeperEnsemble.start(3);
    const rootPath = `/ndl-nemesis-${randomUUID().slice(0, 8)}`;
    return {
      name: 'zookeeper-3',
      endpoints: ensemble.members.map((m) => m.port),
      leaseMs: 1_000,
      lossMs: 1_500 + 2 * ZOOKEEPER_TICK_MS + 600,
      isolationMs: 8_000,
      // A session on the isolated member expires (the loss time) once the others serve: at once when the isolated member was
      // a follower; when it was the leader, after the others have noticed (syncLimit ticks) and elected one, which re-times every session.
      unavailableBound: {
        ms: 1_500 + 2 * ZOOKEEPER_TICK_MS + 600 + 1_000,
        why: "the session's expiry + 1 s, after the others serve with a leader",
        afterServing: true,
      },
      clientConfig: (ports) => ({
        type: 'zookeeper',
        connectionString: ports.map((port) => `127.0.0.1:${port}`).join(','),
        sessionTimeoutMs: 1_500,
        connectTimeoutMs: 2_000,
        rootPath,
      }),
      async isolateMember(which) {
        // Each round starts from an ensemble whose members all serve again (the previous round's isolated member rejoins seconds after its heal).
        await ensemble.settled();
        const member = which === 'leader' ? await ensemble.leader() : ensemble.members[which];
        const heal = isolatePorts([member.port, ...member.peerPorts], { peersOnly: false, pid: member.pid! });
        const servingAgain = ensemble.servingWithout(member).then(
          () => now(),
          () => undefined,
        );
        return { member: member.name, heal, servingAgain };
      },
      restart: () => Promise.reject(new Error('zookeeper-3: no restart fault')),
      stop: () => ensemble.destroy(),
    };
  },
};
